package stream

import (
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"net"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"connectrpc.com/connect"
	"github.com/coder/websocket"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/wirebench/wirebench/grpcws"
	"github.com/wirebench/wirebench/load"
	"github.com/wirebench/wirebench/load/conn"
	"github.com/wirebench/wirebench/pb"
	"github.com/wirebench/wirebench/pb/pbconnect"
	"github.com/wirebench/wirebench/results"
)

// Fairness rule 2 for the stream clients: every item is checked. A fake
// server answers with the right status and the wrong content (out of
// order, the wrong user, the wrong echo, an item missing, an empty
// field, a cut stream, a wrong count), and each exchange must fail with
// the reason its check names. Each kind also has a case of right content
// (want nil): a check that always fails is as useless as one that never
// does. scripts/mutants/stream-checks.txt switches each check off and
// blanks each reason; these tests must fail every one.

// checkExchanges is the exchanges of each case, on one VU, one after
// another: the server's call number picks what it answers.
const checkExchanges = 4

// fakeUsers are users 1..n.
func fakeUsers(n int) []*pb.User {
	us := make([]*pb.User, n)
	for i := range us {
		us[i] = &pb.User{Id: int64(i + 1), Name: fmt.Sprint("user ", i+1), Email: fmt.Sprintf("u%d@example.com", i+1)}
	}
	return us
}

// wrongList is what a fake answers to the call-th list (from 1): the
// users it sends, and an error after them (a cut stream) if cut.
type wrongList func(call int64) (users []*pb.User, cut bool)

var (
	rightList = func(int64) ([]*pb.User, bool) { return fakeUsers(5), false }
	swapped   = func(int64) ([]*pb.User, bool) {
		us := fakeUsers(5)
		us[1], us[2] = us[2], us[1]
		return us, false
	}
	repeated = func(int64) ([]*pb.User, bool) {
		us := fakeUsers(5)
		us[3] = us[2]
		return us, false
	}
	noEmail = func(int64) ([]*pb.User, bool) {
		us := fakeUsers(5)
		us[4].Email = ""
		return us, false
	}
	// missing drops the last user from the second list on: the first
	// sets the length every later list must have.
	missing = func(call int64) ([]*pb.User, bool) {
		if call == 1 {
			return fakeUsers(5), false
		}
		return fakeUsers(4), false
	}
	extra = func(call int64) ([]*pb.User, bool) {
		if call == 1 {
			return fakeUsers(5), false
		}
		return fakeUsers(6), false
	}
	empty = func(int64) ([]*pb.User, bool) { return nil, false }
	cut   = func(int64) ([]*pb.User, bool) { return fakeUsers(3), true }
)

// runChecks runs o for checkExchanges exchanges on one VU and wants
// exactly the failures want (nil: none); "decode" stands for every
// "decode: <the decoder's message>".
func runChecks(t *testing.T, o Options, want map[string]int64) *results.Load {
	t.Helper()
	if o.Timeout == 0 {
		o.Timeout = 10 * time.Second
	}
	sc, err := New(o)
	if err != nil {
		t.Fatal(err)
	}
	defer sc.(*streamScenario).Close()
	res, err := load.Run(context.Background(), load.Options{Options: results.Options{Concurrency: 1, Requests: checkExchanges}}, sc)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]int64{}
	for r, n := range res.Failures {
		if strings.HasPrefix(r, "decode: ") { // the decoder's own words follow
			r = "decode"
		}
		got[r] += n
	}
	if len(got) == 0 {
		got = nil
	}
	if res.Requests != checkExchanges || !maps.Equal(got, want) || res.Failed != sum(want) {
		t.Errorf("%s: %d exchanges, %d failed: %v; want %v", o.Kind, res.Requests, res.Failed, res.Failures, want)
	}
	return res
}

func sum(m map[string]int64) (n int64) {
	for _, v := range m {
		n += v
	}
	return n
}

// fakeGRPC is a gRPC server whose user list, unary get, client stream
// and echo are wrong as the test says.
type fakeGRPC struct {
	pb.UnimplementedUserServiceServer
	pb.UnimplementedEchoServiceServer
	list    wrongList
	calls   atomic.Int64
	getID   func(id int64) int64 // the id Get answers for id
	getErr  error
	created func(n int64) int64 // the count CreateMany answers for n users
	manyErr error
	echo    func(want string) string
	chatErr error
}

func (f *fakeGRPC) Get(ctx context.Context, r *pb.GetUserRequest) (*pb.User, error) {
	if f.getErr != nil {
		return nil, f.getErr
	}
	return &pb.User{Id: f.getID(r.Id), Name: "u", Email: "u@example.com"}, nil
}

func (f *fakeGRPC) Stream(_ *pb.ListUsersRequest, s grpc.ServerStreamingServer[pb.User]) error {
	us, cut := f.list(f.calls.Add(1))
	for _, u := range us {
		if err := s.Send(u); err != nil {
			return err
		}
	}
	if cut {
		return status.Error(codes.DataLoss, "cut")
	}
	return nil
}

func (f *fakeGRPC) CreateMany(s grpc.ClientStreamingServer[pb.User, pb.CreateManyReply]) error {
	var n int64
	for {
		_, err := s.Recv()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return err
		}
		n++
	}
	if f.manyErr != nil {
		return f.manyErr
	}
	return s.SendAndClose(&pb.CreateManyReply{Created: f.created(n)})
}

func (f *fakeGRPC) Chat(s grpc.BidiStreamingServer[pb.EchoRequest, pb.EchoResponse]) error {
	for {
		r, err := s.Recv()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return err
		}
		if f.chatErr != nil {
			return f.chatErr
		}
		if err := s.Send(&pb.EchoResponse{Message: f.echo(r.FirstMessage + r.SecondMessage)}); err != nil {
			return err
		}
	}
}

// right fills what the test left unset with right answers.
func (f *fakeGRPC) right() *fakeGRPC {
	if f.list == nil {
		f.list = rightList
	}
	if f.getID == nil {
		f.getID = func(id int64) int64 { return id }
	}
	if f.created == nil {
		f.created = func(n int64) int64 { return n }
	}
	if f.echo == nil {
		f.echo = func(s string) string { return s }
	}
	return f
}

func startFakeGRPC(t *testing.T, f *fakeGRPC) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s := grpc.NewServer()
	pb.RegisterUserServiceServer(s, f.right())
	pb.RegisterEchoServiceServer(s, f)
	go s.Serve(ln)
	t.Cleanup(s.Stop)
	return ln.Addr().String()
}

var (
	plusOne  = func(id int64) int64 { return id + 1 }
	oneLess  = func(n int64) int64 { return n - 1 }
	reversed = func(s string) string { return s[1:] + s[:1] }
)

func TestChecksGRPCKinds(t *testing.T) {
	cases := []struct {
		name string
		kind string
		fake *fakeGRPC
		want map[string]int64
	}{
		{"right", GRPCServer, &fakeGRPC{}, nil},
		{"out of order", GRPCServer, &fakeGRPC{list: swapped}, map[string]int64{"check: users out of order or empty": 4}},
		{"repeated", GRPCServer, &fakeGRPC{list: repeated}, map[string]int64{"check: users out of order or empty": 4}},
		{"no email", GRPCServer, &fakeGRPC{list: noEmail}, map[string]int64{"check: users out of order or empty": 4}},
		{"missing", GRPCServer, &fakeGRPC{list: missing}, map[string]int64{"check: list length": 3}},
		{"extra", GRPCServer, &fakeGRPC{list: extra}, map[string]int64{"check: list length": 3}},
		{"empty", GRPCServer, &fakeGRPC{list: empty}, map[string]int64{"check: list length": 4}},
		{"cut", GRPCServer, &fakeGRPC{list: cut}, map[string]int64{"grpc DataLoss": 4}},
		{"right", GRPCGet, &fakeGRPC{}, nil},
		{"wrong user", GRPCGet, &fakeGRPC{getID: plusOne}, map[string]int64{"check: wrong user": 4}},
		{"error", GRPCGet, &fakeGRPC{getErr: status.Error(codes.NotFound, "no")}, map[string]int64{"grpc NotFound": 4}},
		{"right", GRPCGetNewConn, &fakeGRPC{}, nil},
		{"wrong user", GRPCGetNewConn, &fakeGRPC{getID: plusOne}, map[string]int64{"check: wrong user": 4}},
		{"error", GRPCGetNewConn, &fakeGRPC{getErr: status.Error(codes.PermissionDenied, "no")}, map[string]int64{"grpc PermissionDenied": 4}},
		{"right", GRPCClient, &fakeGRPC{}, nil},
		{"wrong count", GRPCClient, &fakeGRPC{created: oneLess}, map[string]int64{"check: created count": 4}},
		{"error", GRPCClient, &fakeGRPC{manyErr: status.Error(codes.ResourceExhausted, "full")}, map[string]int64{"grpc ResourceExhausted": 4}},
		{"right", GRPCBidi, &fakeGRPC{}, nil},
		{"wrong echo", GRPCBidi, &fakeGRPC{echo: reversed}, map[string]int64{"check: wrong echo": 4}},
		{"error", GRPCBidi, &fakeGRPC{chatErr: status.Error(codes.Aborted, "no")}, map[string]int64{"grpc Aborted": 4}},
	}
	for _, c := range cases {
		t.Run(c.kind+"/"+c.name, func(t *testing.T) {
			addr := startFakeGRPC(t, c.fake)
			runChecks(t, Options{Kind: c.kind, GRPC: addr, Messages: 3}, c.want)
		})
	}
}

// TestChecksTunnelKinds: the same wrongs through the gRPC-over-WebSocket
// tunnel (a gRPC server on the tunnel's listener, as the REST port serves
// /grpc-ws).
func TestChecksTunnelKinds(t *testing.T) {
	for _, c := range []struct {
		name string
		kind string
		fake *fakeGRPC
		want map[string]int64
	}{
		{"right", TunnelGet, &fakeGRPC{}, nil},
		{"wrong user", TunnelGet, &fakeGRPC{getID: plusOne}, map[string]int64{"check: wrong user": 4}},
		{"right", TunnelSrv, &fakeGRPC{}, nil},
		{"out of order", TunnelSrv, &fakeGRPC{list: swapped}, map[string]int64{"check: users out of order or empty": 4}},
		{"missing", TunnelSrv, &fakeGRPC{list: missing}, map[string]int64{"check: list length": 3}},
		{"cut", TunnelSrv, &fakeGRPC{list: cut}, map[string]int64{"grpc DataLoss": 4}},
	} {
		t.Run(c.kind+"/"+c.name, func(t *testing.T) {
			l := grpcws.NewListener(nil)
			s := grpc.NewServer()
			pb.RegisterUserServiceServer(s, c.fake.right())
			go s.Serve(l)
			t.Cleanup(s.Stop)
			mux := http.NewServeMux()
			mux.Handle("/grpc-ws", grpcws.Handler(l))
			runChecks(t, Options{Kind: c.kind, Options: conn.Options{URL: startFakeHTTP(t, mux)}}, c.want)
		})
	}
}

// TestChecksGRPCDialFailure: a kind whose shared connection could not be
// made fails every exchange with the reason, and a gRPC server that is
// not there fails the call.
func TestChecksGRPCDialFailure(t *testing.T) {
	sc, err := New(Options{Kind: GRPCGet, GRPC: "127.0.0.1:1", Options: conn.Options{Timeout: 5 * time.Second}})
	if err != nil {
		t.Fatal(err)
	}
	s := sc.(*streamScenario)
	s.sharedOnce.Do(func() { s.sharedErr = errors.New("refused by the test") })
	res, err := load.Run(context.Background(), load.Options{Options: results.Options{Concurrency: 1, Requests: 2}}, sc)
	if err != nil {
		t.Fatal(err)
	}
	if want := map[string]int64{"dial: refused by the test": 2}; !maps.Equal(res.Failures, want) {
		t.Errorf("failures %v, want %v", res.Failures, want)
	}
	// grpc-go's client refuses a target it cannot parse before dialling.
	runChecks(t, Options{Kind: GRPCGetNewConn, GRPC: "%zz"}, map[string]int64{`dial: parse "dns:///passthrough:///%zz": invalid URL escape "%zz"`: 4})
}

// fakeConnect is the Connect and gRPC-Web face of the same wrongs.
type fakeConnect struct {
	pbconnect.UnimplementedUserServiceHandler
	list   wrongList
	calls  atomic.Int64
	getID  func(int64) int64
	getErr error
}

func (f *fakeConnect) Get(_ context.Context, r *connect.Request[pb.GetUserRequest]) (*connect.Response[pb.User], error) {
	if f.getErr != nil {
		return nil, f.getErr
	}
	return connect.NewResponse(&pb.User{Id: f.getID(r.Msg.Id), Name: "u", Email: "u@example.com"}), nil
}

func (f *fakeConnect) Stream(_ context.Context, _ *connect.Request[pb.ListUsersRequest], s *connect.ServerStream[pb.User]) error {
	us, cut := f.list(f.calls.Add(1))
	for _, u := range us {
		if err := s.Send(u); err != nil {
			return err
		}
	}
	if cut {
		return connect.NewError(connect.CodeDataLoss, errors.New("cut"))
	}
	return nil
}

// startFakeHTTP serves h on 127.0.0.1:0 and returns http://host:port.
func startFakeHTTP(t *testing.T, h http.Handler) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s := &http.Server{Handler: h}
	go s.Serve(ln)
	t.Cleanup(func() { s.Close() })
	return "http://" + ln.Addr().String()
}

func TestChecksConnectKinds(t *testing.T) {
	cases := []struct {
		name string
		fake *fakeConnect
		get  bool
		want map[string]int64
	}{
		{"right", &fakeConnect{}, true, nil},
		{"wrong user", &fakeConnect{getID: plusOne}, true, map[string]int64{"check: wrong user": 4}},
		{"error", &fakeConnect{getErr: connect.NewError(connect.CodeNotFound, errors.New("no"))}, true, map[string]int64{"connect not_found": 4}},
		{"right", &fakeConnect{}, false, nil},
		{"out of order", &fakeConnect{list: swapped}, false, map[string]int64{"check: users out of order": 4}},
		{"repeated", &fakeConnect{list: repeated}, false, map[string]int64{"check: users out of order": 4}},
		{"missing", &fakeConnect{list: missing}, false, map[string]int64{"check: list length": 3}},
		{"extra", &fakeConnect{list: extra}, false, map[string]int64{"check: list length": 3}},
		{"empty", &fakeConnect{list: empty}, false, map[string]int64{"check: list length": 4}},
		{"cut", &fakeConnect{list: cut}, false, map[string]int64{"connect data_loss": 4}},
	}
	for _, c := range cases {
		for _, kind := range []string{ConnectGet, GRPCWebGet, ConnectSrv, GRPCWebSrv} {
			if c.get != (kind == ConnectGet || kind == GRPCWebGet) {
				continue
			}
			t.Run(kind+"/"+c.name, func(t *testing.T) {
				f := fakeConnect{list: c.fake.list, getID: c.fake.getID, getErr: c.fake.getErr}
				if f.list == nil {
					f.list = rightList
				}
				if f.getID == nil {
					f.getID = func(id int64) int64 { return id }
				}
				mux := http.NewServeMux()
				mux.Handle(pbconnect.NewUserServiceHandler(&f))
				runChecks(t, Options{Kind: kind, Options: conn.Options{URL: startFakeHTTP(t, mux)}}, c.want)
			})
		}
	}
}

// userJSON is one user as the REST API writes it.
func userJSON(u *pb.User) string {
	return fmt.Sprintf(`{"id":%d,"name":%q,"email":%q,"created_at":"2026-01-01T00:00:00Z"}`, u.Id, u.Name, u.Email)
}

// restFake answers GET /users as JSON, NDJSON or SSE (by path and
// Accept) with the list's users, and end says how an SSE stream ends.
type restFake struct {
	list  wrongList
	calls atomic.Int64
	// sse: the events after the users ("" is the right end event)
	sseTail *string
	// raw replaces the whole body when set
	raw    string
	status int
}

func (f *restFake) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	us, _ := f.list(f.calls.Add(1))
	if f.status != 0 {
		w.WriteHeader(f.status)
		return
	}
	var b strings.Builder
	switch {
	case f.raw != "":
		b.WriteString(f.raw)
	case r.URL.Path == "/users/events":
		w.Header().Set("Content-Type", "text/event-stream")
		for _, u := range us {
			fmt.Fprintf(&b, "event: user\nid: %d\ndata: %s\n\n", u.Id, userJSON(u))
		}
		if f.sseTail != nil {
			b.WriteString(*f.sseTail)
		} else {
			b.WriteString("event: end\ndata: {}\n\n")
		}
	case r.Header.Get("Accept") == "application/x-ndjson":
		w.Header().Set("Content-Type", "application/x-ndjson")
		for _, u := range us {
			b.WriteString(userJSON(u) + "\n")
		}
	default:
		w.Header().Set("Content-Type", "application/json")
		parts := make([]string, len(us))
		for i, u := range us {
			parts[i] = userJSON(u)
		}
		b.WriteString(`{"users":[` + strings.Join(parts, ",") + `]}`)
	}
	io.WriteString(w, b.String())
}

func ptr(s string) *string { return &s }

func TestChecksRESTKinds(t *testing.T) {
	all := []string{RESTList, NDJSON, SSE}
	cases := []struct {
		name  string
		kinds []string
		fake  *restFake
		want  map[string]int64
	}{
		{"right", all, &restFake{}, nil},
		{"out of order", []string{RESTList}, &restFake{list: swapped}, map[string]int64{"check: users out of order": 4}},
		{"repeated", []string{RESTList}, &restFake{list: repeated}, map[string]int64{"check: users out of order": 4}},
		{"out of order", []string{NDJSON, SSE}, &restFake{list: swapped}, map[string]int64{"check: users out of order or empty": 4}},
		{"repeated", []string{NDJSON, SSE}, &restFake{list: repeated}, map[string]int64{"check: users out of order or empty": 4}},
		{"no email", []string{NDJSON, SSE}, &restFake{list: noEmail}, map[string]int64{"check: users out of order or empty": 4}},
		{"missing", all, &restFake{list: missing}, map[string]int64{"check: list length": 3}},
		{"extra", all, &restFake{list: extra}, map[string]int64{"check: list length": 3}},
		{"empty", all, &restFake{list: empty}, map[string]int64{"check: list length": 4}},
		{"status", all, &restFake{status: 503}, map[string]int64{"status 503": 4}},
		{"not JSON", []string{RESTList}, &restFake{raw: `{"users":[{"id":1,`}, map[string]int64{"decode": 4}},
		{"not JSON", []string{NDJSON}, &restFake{raw: "{\"id\":1,\"email\":\"a@b\"}\n{\"id\":2,\n"}, map[string]int64{"decode": 4}},
		{"not JSON", []string{SSE}, &restFake{raw: "event: user\ndata: {\"id\":1,\n\n"}, map[string]int64{"decode": 4}},
		{"no end event", []string{SSE}, &restFake{sseTail: ptr("")}, map[string]int64{"check: stream ended without its end event": 4}},
		{"data after the end", []string{SSE}, &restFake{sseTail: ptr("event: end\ndata: {}\n\nevent: user\ndata: " + userJSON(fakeUsers(6)[5]) + "\n\n")}, map[string]int64{"check: data after the end event": 4}},
	}
	for _, c := range cases {
		for _, kind := range c.kinds {
			t.Run(kind+"/"+c.name, func(t *testing.T) {
				f := &restFake{list: c.fake.list, sseTail: c.fake.sseTail, raw: c.fake.raw, status: c.fake.status}
				if f.list == nil {
					f.list = rightList
				}
				res := runChecks(t, Options{Kind: kind, Options: conn.Options{URL: startFakeHTTP(t, f)}}, c.want)
				if c.want == nil && res.Stream.Items != checkExchanges*5 {
					t.Errorf("%d items", res.Stream.Items)
				}
			})
		}
	}
}

// TestChecksRESTTransport: the list's transport failures, each with its
// reason: a refused connection, a body over the client's limit, a URL
// the request cannot be made from.
func TestChecksRESTTransport(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closed := "http://" + ln.Addr().String()
	ln.Close()
	runChecks(t, Options{Kind: RESTList, Options: conn.Options{URL: closed}}, map[string]int64{"connection refused": 4})
	runChecks(t, Options{Kind: NDJSON, Options: conn.Options{URL: closed}}, map[string]int64{"connection refused": 4})

	big := startFakeHTTP(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", r.Header.Get("Accept"))
		if r.Header.Get("Accept") == "application/x-ndjson" { // one record over the line limit
			fmt.Fprintf(w, "{\"id\":1,\"email\":\"%s\"}\n", strings.Repeat("x", maxStreamLine))
			return
		}
		io.WriteString(w, `{"users":[`)
		pad := strings.Repeat(" ", 1<<20)
		for range 65 {
			io.WriteString(w, pad)
		}
	}))
	runChecks(t, Options{Kind: RESTList, Options: conn.Options{URL: big}}, map[string]int64{"http: request body too large": 4})
	runChecks(t, Options{Kind: NDJSON, Options: conn.Options{URL: big}}, map[string]int64{"bufio.Scanner: token too long": 4})

	// url.Parse unescapes the zone; the request's URL then has a bad escape
	runChecks(t, Options{Kind: NDJSON, Options: conn.Options{URL: "http://[fe80::1%25zz]:1"}}, map[string]int64{`request: parse "http://[fe80::1%zz]:1/users": invalid URL escape "%zz"`: 4})
}

// wsFake is a WebSocket echo that answers wrong as the test says.
type wsFake struct {
	echo  func(string) string
	after int // messages answered before the connection is closed (0: never)
}

func (f *wsFake) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path != "/ws/echo" {
		http.NotFound(w, r)
		return
	}
	c, err := websocket.Accept(w, r, nil)
	if err != nil {
		return
	}
	defer c.CloseNow()
	for n := 1; ; n++ {
		_, msg, err := c.Read(r.Context())
		if err != nil {
			return
		}
		var q struct {
			A string `json:"first_message"`
			B string `json:"second_message"`
		}
		if err := fastJSON.Unmarshal(msg, &q); err != nil {
			return
		}
		if f.after > 0 && n > f.after {
			return // a cut exchange: the client's read fails
		}
		b, _ := fastJSON.Marshal(map[string]string{"message": f.echo(q.A + q.B)})
		if err := c.Write(r.Context(), websocket.MessageText, b); err != nil {
			return
		}
	}
}

func TestChecksWebSocket(t *testing.T) {
	same := func(s string) string { return s }
	for _, c := range []struct {
		name string
		fake *wsFake
		want map[string]int64
	}{
		{"right", &wsFake{echo: same}, nil},
		{"wrong echo", &wsFake{echo: reversed}, map[string]int64{"check: wrong echo": 4}},
		{"not JSON", &wsFake{echo: func(string) string { return "" }}, map[string]int64{"check: wrong echo": 4}},
		// the connection is cut in the first exchange; the next ones dial again
		{"cut", &wsFake{echo: same, after: 2}, map[string]int64{"websocket read: closed before response": 4}},
	} {
		t.Run(c.name, func(t *testing.T) {
			runChecks(t, Options{Kind: WebSocket, Options: conn.Options{URL: startFakeHTTP(t, c.fake)}, Messages: 3}, c.want)
		})
	}
	// no WebSocket at /ws/echo: the dial fails
	notWS := startFakeHTTP(t, http.NotFoundHandler())
	runChecks(t, Options{Kind: WebSocket, Options: conn.Options{URL: notWS}}, map[string]int64{
		"websocket dial: failed to WebSocket dial: expected handshake response status code 101 but got 404": 4})
}

// TestStreamDoReasons: what Do makes of an exchange's reason: a failed
// exchange that named none is "stream failed", and a deadline the
// exchange ran into is "timeout", whatever library worded it.
func TestStreamDoReasons(t *testing.T) {
	sc, err := New(Options{Kind: NDJSON, Options: conn.Options{URL: "http://127.0.0.1:1", Timeout: 20 * time.Millisecond}})
	if err != nil {
		t.Fatal(err)
	}
	s := sc.(*streamScenario)
	var mu sync.Mutex
	for _, c := range []struct {
		do   func(ctx context.Context, o *load.Outcome, t0 time.Time) (int, time.Duration, time.Duration, bool)
		want string
	}{
		{func(context.Context, *load.Outcome, time.Time) (int, time.Duration, time.Duration, bool) {
			return 0, 0, 0, false
		}, "stream failed"},
		{func(ctx context.Context, o *load.Outcome, _ time.Time) (int, time.Duration, time.Duration, bool) {
			<-ctx.Done()
			o.Fail = "websocket read: failed to read: " + ctx.Err().Error()
			return 0, 0, 0, false
		}, "timeout"},
		// a reason that is not a deadline stays, even after the deadline
		{func(ctx context.Context, o *load.Outcome, _ time.Time) (int, time.Duration, time.Duration, bool) {
			<-ctx.Done()
			o.Fail = "check: wrong echo"
			return 0, 0, 0, false
		}, "check: wrong echo"},
	} {
		mu.Lock()
		v := &streamVU{s: s, do: c.do}
		var o load.Outcome
		v.Do(context.Background(), &o)
		mu.Unlock()
		if o.Fail != c.want {
			t.Errorf("reason %q, want %q", o.Fail, c.want)
		}
	}
}
