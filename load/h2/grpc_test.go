package h2

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"net"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"golang.org/x/net/http2"
	"golang.org/x/net/http2/hpack"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/emptypb"

	"github.com/wirebench/wirebench/grpcapi"
	"github.com/wirebench/wirebench/internal/rawio"
	"github.com/wirebench/wirebench/internal/testkit"
	"github.com/wirebench/wirebench/load/clientio"
	"github.com/wirebench/wirebench/load/internal/loadtest"
	"github.com/wirebench/wirebench/measure"
	"github.com/wirebench/wirebench/pb"
	"github.com/wirebench/wirebench/store"
)

// The lean gRPC client against grpc-go's server (a server nobody here
// wrote) and against a scripted HTTP/2 server for what grpc-go never sends.

func leanClient(addr string, wire *measure.Bytes, timeout time.Duration) *GRPCClient {
	d := &net.Dialer{Timeout: time.Second}
	dial := RawIODialer(d.DialContext, wire)
	c := &GRPCClient{lean: NewGRPCConn(addr, dial), timeout: timeout}
	c.call.done = make(chan struct{}, 1)
	return c
}

// vuClient is another VU's client on the same connection.
func (c *GRPCClient) vuClient() *GRPCClient {
	v := &GRPCClient{lean: c.lean, timeout: c.timeout}
	v.call.done = make(chan struct{}, 1)
	return v
}

func startGRPC(t *testing.T, users int, opts ...grpc.ServerOption) (string, *measure.Listener) {
	t.Helper()
	st := store.NewMemory(store.Options{})
	if err := st.Seed(users, 0); err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ml := &measure.Listener{Listener: ln}
	srv := grpcapi.NewServer(st, opts...)
	go srv.Serve(ml)
	t.Cleanup(srv.Stop)
	return ln.Addr().String(), ml
}

func codeOf(err error) codes.Code { return status.Code(err) }

// TestGRPCLeanCalls: every call of the API, errors with their codes, and
// replies far larger than the windows, so that the client must return
// flow-control credit or stall; the bytes it counts are the bytes the
// server's socket saw.
func TestGRPCLeanCalls(t *testing.T) {
	addr, ml := startGRPC(t, 20000)
	var wire measure.Bytes
	c := leanClient(addr, &wire, 5*time.Second)
	ctx := context.Background()

	u := new(pb.User)
	if err := c.Invoke(ctx, pb.UserService_Get_FullMethodName, &pb.GetUserRequest{Id: 3}, u); err != nil || u.GetId() != 3 {
		t.Fatalf("get 3: %v, id %d", err, u.GetId())
	}
	err := c.Invoke(ctx, pb.UserService_Get_FullMethodName, &pb.GetUserRequest{Id: 1 << 40}, new(pb.User))
	if codeOf(err) != codes.NotFound || !strings.Contains(status.Convert(err).Message(), "not found") {
		t.Fatalf("get missing: %v, want NotFound with the server's message", err)
	}
	created := new(pb.User)
	if err := c.Invoke(ctx, pb.UserService_Create_FullMethodName, &pb.User{Name: "ünïcode", Email: "a@b.test"}, created); err != nil || created.GetId() == 0 || created.GetName() != "ünïcode" {
		t.Fatalf("create: %v, %v", err, created)
	}
	updated := new(pb.User)
	if err := c.Invoke(ctx, pb.UserService_Update_FullMethodName, &pb.User{Id: created.Id, Name: "renamed", Email: "a@b.test"}, updated); err != nil || updated.GetName() != "renamed" {
		t.Fatalf("update: %v, %v", err, updated)
	}
	if err := c.Invoke(ctx, pb.UserService_Delete_FullMethodName, &pb.DeleteUserRequest{Id: created.Id}, new(emptypb.Empty)); err != nil {
		t.Fatalf("delete: %v", err)
	}
	if err := c.Invoke(ctx, pb.UserService_Delete_FullMethodName, &pb.DeleteUserRequest{Id: created.Id}, new(emptypb.Empty)); codeOf(err) != codes.NotFound {
		t.Fatalf("delete again: %v, want NotFound", err)
	}
	echo := new(pb.EchoResponse)
	if err := c.Invoke(ctx, pb.EchoService_Echo_FullMethodName, &pb.EchoRequest{FirstMessage: "a", SecondMessage: "b"}, echo); err != nil || echo.GetMessage() != "ab" {
		t.Fatalf("echo: %v, %q", err, echo.GetMessage())
	}
	if err := c.Invoke(ctx, "/wirebench.v1.UserService/Nope", &pb.GetUserRequest{}, new(pb.User)); codeOf(err) != codes.Unimplemented {
		t.Fatalf("unknown method: %v, want Unimplemented", err)
	}
	// 20000 users are ~1.3 MB a list, beyond the 1 MiB windows per stream
	// and per connection: a list completes only if WINDOW_UPDATEs go back.
	for i := range 2 {
		l := new(pb.UserList)
		if err := c.Invoke(ctx, pb.UserService_List_FullMethodName, &pb.ListUsersRequest{}, l); err != nil || len(l.GetUsers()) != 20000 {
			t.Fatalf("list %d: %v, %d users", i, err, len(l.GetUsers()))
		}
		if i == 0 && proto.Size(l) < grpcLeanWindow {
			t.Fatalf("a list is %d bytes: too small to need window updates", proto.Size(l))
		}
	}
	s := c.lean.sess
	c.lean.Close()
	// The server counts a write when its Write returns, which may be after
	// the client has read those bytes: wait for both counts to catch up.
	deadline := time.Now().Add(5 * time.Second)
	for (ml.Bytes.In.Load() != wire.Out.Load() || ml.Bytes.Out.Load() < wire.In.Load()) && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if got, want := wire.Out.Load(), ml.Bytes.In.Load(); got != want {
		t.Errorf("client counted %d bytes out, the server read %d", got, want)
	}
	if got, max := wire.In.Load(), ml.Bytes.Out.Load(); got > max || got < max-1024 {
		t.Errorf("client counted %d bytes in, the server wrote %d", got, max)
	}
	if s == nil || s.err == nil {
		t.Error("close left the connection open")
	}
}

// TestGRPCLeanSharedConnection: VUs share one connection beyond the
// server's stream limit; every call gets its own reply.
func TestGRPCLeanSharedConnection(t *testing.T) {
	addr, _ := startGRPC(t, 64, grpc.MaxConcurrentStreams(4))
	c := leanClient(addr, nil, 5*time.Second)
	var wg sync.WaitGroup
	errs := make(chan error, 32)
	for g := range 32 {
		v := c.vuClient()
		wg.Go(func() {
			for i := range 100 {
				id := int64((g+i)%64 + 1)
				u := new(pb.User)
				if err := v.Invoke(context.Background(), pb.UserService_Get_FullMethodName, &pb.GetUserRequest{Id: id}, u); err != nil || u.GetId() != id {
					errs <- fmt.Errorf("VU %d call %d: %v, got user %d want %d", g, i, err, u.GetId(), id)
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	if cap(c.lean.sess.slots) != 4 {
		t.Errorf("slots %d, want the server's limit 4", cap(c.lean.sess.slots))
	}
	c.lean.Close()
}

// slowUsers answers Get at once, except id 13, which it holds until the
// call is cancelled; it records what it saw of the client's deadline.
type slowUsers struct {
	pb.UnimplementedUserServiceServer
	cancelled   atomic.Int32
	hadDeadline atomic.Bool
}

func (s *slowUsers) Get(ctx context.Context, r *pb.GetUserRequest) (*pb.User, error) {
	if _, ok := ctx.Deadline(); ok {
		s.hadDeadline.Store(true)
	}
	if r.GetId() == 13 {
		<-ctx.Done()
		s.cancelled.Add(1)
		return nil, ctx.Err()
	}
	return &pb.User{Id: r.GetId()}, nil
}

// TestGRPCLeanTimeoutKeepsConnection: a call that times out or is
// cancelled ends promptly, is reset on the wire, and leaves the
// connection to the calls beside it.
func TestGRPCLeanTimeoutKeepsConnection(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	su := &slowUsers{}
	srv := grpc.NewServer()
	pb.RegisterUserServiceServer(srv, su)
	go srv.Serve(ln)
	defer srv.Stop()
	c := leanClient(ln.Addr().String(), nil, 0)
	get := func(cl *GRPCClient, ctx context.Context, id int64) error {
		u := new(pb.User)
		err := cl.Invoke(ctx, pb.UserService_Get_FullMethodName, &pb.GetUserRequest{Id: id}, u)
		if err == nil && u.GetId() != id {
			err = fmt.Errorf("got user %d, want %d", u.GetId(), id)
		}
		return err
	}
	if err := get(c, context.Background(), 1); err != nil {
		t.Fatal(err)
	}
	first := c.lean.sess

	// Fast calls keep going on the same connection while one times out.
	stop := make(chan struct{})
	fastErr := make(chan error, 1)
	v := c.vuClient()
	go func() {
		n := 0
		for {
			select {
			case <-stop:
				if n == 0 {
					fastErr <- errors.New("no fast call completed")
				}
				fastErr <- nil
				return
			default:
			}
			if err := get(v, context.Background(), 2); err != nil {
				fastErr <- err
				return
			}
			n++
		}
	}()
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	start := time.Now()
	err = get(c, ctx, 13)
	cancel()
	if codeOf(err) != codes.DeadlineExceeded || (testkit.Timing() && time.Since(start) > 2*time.Second) {
		t.Fatalf("slow call: %v after %v, want DeadlineExceeded at ~100ms", err, time.Since(start))
	}
	close(stop)
	if err := <-fastErr; err != nil {
		t.Fatalf("fast calls beside the timeout: %v", err)
	}

	ctx, cancel = context.WithCancel(context.Background())
	time.AfterFunc(50*time.Millisecond, cancel)
	if err := get(c, ctx, 13); codeOf(err) != codes.Canceled {
		t.Fatalf("cancelled call: %v, want Canceled", err)
	}
	if err := get(c, context.Background(), 3); err != nil {
		t.Fatalf("call after the timeout: %v", err)
	}
	if c.lean.sess != first {
		t.Error("a timeout between frames replaced the connection")
	}
	deadline := time.Now().Add(2 * time.Second)
	for su.cancelled.Load() < 2 && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}
	if su.cancelled.Load() != 2 {
		t.Errorf("the server saw %d of 2 abandoned calls cancelled", su.cancelled.Load())
	}
	if !su.hadDeadline.Load() {
		t.Error("the server never saw a grpc-timeout")
	}
	c.lean.Close()
}

// TestTimeoutField: the hand-encoded grpc-timeout field is byte for byte
// what hpack's Encoder writes for it as a sensitive field, and decodes back.
func TestTimeoutField(t *testing.T) {
	for _, d := range []time.Duration{0, time.Nanosecond, 1500 * time.Microsecond, 5 * time.Second, 99999999, math.MaxInt64} {
		var want bytes.Buffer
		hpack.NewEncoder(&want).WriteField(hpack.HeaderField{Name: "grpc-timeout", Value: grpcTimeout(d), Sensitive: true})
		got := appendTimeoutField([]byte("prefix"), d)
		if !bytes.Equal(got[6:], want.Bytes()) || string(got[:6]) != "prefix" {
			t.Errorf("%v: %x, want %x", d, got, want.Bytes())
		}
		fields, err := hpack.NewDecoder(4096, nil).DecodeFull(got[6:])
		if err != nil || len(fields) != 1 || fields[0].Name != "grpc-timeout" || fields[0].Value != grpcTimeout(d) || !fields[0].Sensitive {
			t.Errorf("%v: decodes to %v, %v", d, fields, err)
		}
	}
}

func TestGRPCTimeoutHeader(t *testing.T) {
	for _, c := range []struct {
		d    time.Duration
		want string
	}{
		{0, "1n"}, {-time.Second, "1n"}, {time.Nanosecond, "1n"}, {99999999, "99999999n"},
		{100 * time.Millisecond, "100000u"}, {time.Second, "1000000u"}, {1500 * time.Microsecond, "1500000n"},
		{time.Minute, "60000000u"}, {1000001 * time.Nanosecond, "1000001n"}, {100000001 * time.Microsecond, "100001m"},
		{200 * time.Hour, "720000S"}, {3000 * time.Hour, "10800000S"}, {1 << 62, "76861434M"},
		{math.MaxInt64, "2562048H"},
	} {
		if got := grpcTimeout(c.d); got != c.want {
			t.Errorf("grpcTimeout(%v) = %q, want %q", c.d, got, c.want)
		}
	}
}

func TestDecodeGRPCMessage(t *testing.T) {
	for in, want := range map[string]string{
		"":                  "",
		"plain":             "plain",
		"a%20b":             "a b",
		"%E2%9C%93":         "✓",
		"100%":              "100%",
		"%zz%41":            "%zzA",
		"%4":                "%4",
		"%25%32%35":         "%25",
		"no%20such%20user.": "no such user.",
	} {
		if got := decodeGRPCMessage(in); got != want {
			t.Errorf("decodeGRPCMessage(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestDecodeGRPCReply(t *testing.T) {
	good, _ := AppendGRPCMessage(nil, &pb.User{Id: 7, Name: "x"})
	u := new(pb.User)
	if err := decodeGRPCReply(good, u); err != nil || u.GetId() != 7 {
		t.Fatalf("good reply: %v, %v", err, u)
	}
	compressed := append([]byte{1}, good[1:]...)
	for name, b := range map[string][]byte{
		"empty":        nil,
		"short prefix": good[:4],
		"compressed":   compressed,
		"two messages": append(append([]byte{}, good...), good...),
		"truncated":    good[:len(good)-1],
		"not protobuf": {0, 0, 0, 0, 2, 0xff, 0xff},
	} {
		if err := decodeGRPCReply(b, new(pb.User)); codeOf(err) != codes.Internal {
			t.Errorf("%s: %v, want Internal", name, err)
		}
	}
}

// script is a scripted HTTP/2 server's answer to one call: it writes
// frames for the stream with fr and he (whose output goes to hb).
type script func(t *testing.T, conn int, id uint32, fr *http2.Framer, hb *bytes.Buffer, he *hpack.Encoder)

// startH2Script serves each call with answer; conn counts connections
// from 0. Every call's request must be one valid gRPC message.
func startH2Script(t *testing.T, settings []http2.Setting, answer script) string {
	t.Helper()
	var conns atomic.Int32
	return loadtest.ServeTCP(t, func(c net.Conn) {
		serveH2Script(t, c, int(conns.Add(1))-1, settings, answer, false)
	})
}

// serveH2Script serves one connection; closeAfter closes it after the
// first answer.
func serveH2Script(t *testing.T, c net.Conn, n int, settings []http2.Setting, answer script, closeAfter bool) {
	defer c.Close()
	h, err := loadtest.OpenFakeH2(c, settings...)
	if err != nil {
		return
	}
	fr, bw, hb, he := h.Fr, h.BW, &h.HB, h.HE
	var body []byte
	for {
		f, err := fr.ReadFrame()
		if err != nil {
			return
		}
		switch f := f.(type) {
		case *http2.MetaHeadersFrame:
			if f.PseudoValue("path") == "" || metaValue(f, "content-type") != "application/grpc" || metaValue(f, "te") != "trailers" {
				t.Errorf("request headers %v", f.Fields)
			}
			if v := metaValue(f, "grpc-timeout"); v != "" {
				// The lean client encodes it by hand: it must decode as a
				// timeout no longer than the client's (at most 5 s, or an
				// hour for flipDeadline).
				units := map[byte]time.Duration{'n': time.Nanosecond, 'u': time.Microsecond, 'm': time.Millisecond, 'S': time.Second, 'M': time.Minute, 'H': time.Hour}
				n, err := strconv.ParseInt(v[:len(v)-1], 10, 64)
				if u, ok := units[v[len(v)-1]]; !ok || err != nil || len(v) > 9 || n <= 0 || time.Duration(n)*u > time.Hour {
					t.Errorf("grpc-timeout %q", v)
				}
			}
			body = body[:0]
		case *http2.DataFrame:
			body = append(body, f.Data()...)
			if f.StreamEnded() {
				if err := decodeGRPCReply(body, new(pb.GetUserRequest)); err != nil {
					t.Errorf("request body: %v", err)
				}
				answer(t, n, f.StreamID, fr, hb, he)
				if bw.Flush() != nil || closeAfter {
					return
				}
			}
		case *http2.SettingsFrame:
			if !f.IsAck() {
				fr.WriteSettingsAck()
				bw.Flush()
			}
		}
	}
}

func metaValue(f *http2.MetaHeadersFrame, name string) string {
	for _, h := range f.RegularFields() {
		if h.Name == name {
			return h.Value
		}
	}
	return ""
}

func writeHeaders(fr *http2.Framer, hb *bytes.Buffer, he *hpack.Encoder, id uint32, end bool, kv ...string) {
	hb.Reset()
	for i := 0; i < len(kv); i += 2 {
		he.WriteField(hpack.HeaderField{Name: kv[i], Value: kv[i+1]})
	}
	fr.WriteHeaders(http2.HeadersFrameParam{StreamID: id, BlockFragment: hb.Bytes(), EndHeaders: true, EndStream: end})
}

var okHead = []string{":status", "200", "content-type", "application/grpc"}

func replyUser(fr *http2.Framer, hb *bytes.Buffer, he *hpack.Encoder, id uint32, userID int64) {
	writeHeaders(fr, hb, he, id, false, okHead...)
	msg, _ := AppendGRPCMessage(nil, &pb.User{Id: userID})
	fr.WriteData(id, false, msg)
	writeHeaders(fr, hb, he, id, true, "grpc-status", "0")
}

// TestGRPCLeanReplies: what a server may answer, and the status the call
// ends with, as grpc-go's client would report it.
func TestGRPCLeanReplies(t *testing.T) {
	msg, _ := AppendGRPCMessage(nil, &pb.User{Id: 1})
	cases := []struct {
		name   string
		answer script
		want   codes.Code
		text   string
	}{
		{"ok", func(_ *testing.T, _ int, id uint32, fr *http2.Framer, hb *bytes.Buffer, he *hpack.Encoder) {
			replyUser(fr, hb, he, id, 1)
		}, codes.OK, ""},
		{"trailers only, encoded message", func(_ *testing.T, _ int, id uint32, fr *http2.Framer, hb *bytes.Buffer, he *hpack.Encoder) {
			writeHeaders(fr, hb, he, id, true, append(okHead, "grpc-status", "5", "grpc-message", "no%20such%20user%3A%20%E2%9C%93")...)
		}, codes.NotFound, "no such user: ✓"},
		{"HTTP 503", func(_ *testing.T, _ int, id uint32, fr *http2.Framer, hb *bytes.Buffer, he *hpack.Encoder) {
			writeHeaders(fr, hb, he, id, true, ":status", "503")
		}, codes.Unavailable, "HTTP status 503"},
		{"HTTP 404", func(_ *testing.T, _ int, id uint32, fr *http2.Framer, hb *bytes.Buffer, he *hpack.Encoder) {
			writeHeaders(fr, hb, he, id, true, ":status", "404")
		}, codes.Unimplemented, "404"},
		{"not gRPC", func(_ *testing.T, _ int, id uint32, fr *http2.Framer, hb *bytes.Buffer, he *hpack.Encoder) {
			writeHeaders(fr, hb, he, id, false, ":status", "200", "content-type", "text/html")
			fr.WriteData(id, true, []byte("<html>"))
		}, codes.Unknown, "text/html"},
		{"no trailers", func(_ *testing.T, _ int, id uint32, fr *http2.Framer, hb *bytes.Buffer, he *hpack.Encoder) {
			writeHeaders(fr, hb, he, id, false, okHead...)
			fr.WriteData(id, true, msg)
		}, codes.Internal, "without sending trailers"},
		{"no grpc-status", func(_ *testing.T, _ int, id uint32, fr *http2.Framer, hb *bytes.Buffer, he *hpack.Encoder) {
			writeHeaders(fr, hb, he, id, false, okHead...)
			fr.WriteData(id, false, msg)
			writeHeaders(fr, hb, he, id, true, "x", "y")
		}, codes.Internal, "without grpc-status"},
		{"DATA first", func(_ *testing.T, _ int, id uint32, fr *http2.Framer, hb *bytes.Buffer, he *hpack.Encoder) {
			fr.WriteData(id, false, msg)
		}, codes.Internal, "before HEADERS"},
		{"two messages", func(_ *testing.T, _ int, id uint32, fr *http2.Framer, hb *bytes.Buffer, he *hpack.Encoder) {
			writeHeaders(fr, hb, he, id, false, okHead...)
			fr.WriteData(id, false, msg)
			fr.WriteData(id, false, msg)
			writeHeaders(fr, hb, he, id, true, "grpc-status", "0")
		}, codes.Internal, "one message"},
		{"reset cancel", func(_ *testing.T, _ int, id uint32, fr *http2.Framer, _ *bytes.Buffer, _ *hpack.Encoder) {
			fr.WriteRSTStream(id, http2.ErrCodeCancel)
		}, codes.Canceled, "CANCEL"},
		{"reset calm", func(_ *testing.T, _ int, id uint32, fr *http2.Framer, _ *bytes.Buffer, _ *hpack.Encoder) {
			fr.WriteRSTStream(id, http2.ErrCodeEnhanceYourCalm)
		}, codes.ResourceExhausted, "ENHANCE_YOUR_CALM"},
		{"refused, then served", func(_ *testing.T, _ int, id uint32, fr *http2.Framer, hb *bytes.Buffer, he *hpack.Encoder) {
			if id == 1 {
				fr.WriteRSTStream(id, http2.ErrCodeRefusedStream)
				return
			}
			replyUser(fr, hb, he, id, 1)
		}, codes.OK, ""},
		{"refused twice", func(_ *testing.T, _ int, id uint32, fr *http2.Framer, _ *bytes.Buffer, _ *hpack.Encoder) {
			fr.WriteRSTStream(id, http2.ErrCodeRefusedStream)
		}, codes.Unavailable, "refused"},
		{"GOAWAY, then a new connection", func(_ *testing.T, conn int, id uint32, fr *http2.Framer, hb *bytes.Buffer, he *hpack.Encoder) {
			if conn == 0 {
				fr.WriteGoAway(0, http2.ErrCodeNo, nil)
				return
			}
			replyUser(fr, hb, he, id, 1)
		}, codes.OK, ""},
		{"PING before the reply", func(t *testing.T, _ int, id uint32, fr *http2.Framer, hb *bytes.Buffer, he *hpack.Encoder) {
			fr.WritePing(false, [8]byte{1, 2, 3, 4, 5, 6, 7, 8})
			replyUser(fr, hb, he, id, 1)
		}, codes.OK, ""},
		{"closed mid-reply", func(_ *testing.T, _ int, id uint32, fr *http2.Framer, hb *bytes.Buffer, he *hpack.Encoder) {
			writeHeaders(fr, hb, he, id, false, okHead...)
			fr.WriteData(id, false, msg) // and no trailers: the server closes
		}, codes.Unavailable, "connection failed"},
	}
	// Over a rawio.Conn the caller's request is queued for its own read;
	// over any other connection it is written, then read for.
	for _, tc := range cases {
		for _, raw := range []bool{true, false} {
			t.Run(fmt.Sprintf("%s/raw=%v", tc.name, raw), func(t *testing.T) {
				var addr string
				if tc.name == "closed mid-reply" {
					addr = startClosingScript(t, tc.answer)
				} else {
					addr = startH2Script(t, nil, tc.answer)
				}
				c := leanClient(addr, nil, 5*time.Second)
				if !raw {
					c = plainLeanClient(addr, 5*time.Second)
				}
				defer c.lean.Close()
				u := new(pb.User)
				err := c.Invoke(context.Background(), pb.UserService_Get_FullMethodName, &pb.GetUserRequest{Id: 1}, u)
				if codeOf(err) != tc.want || !strings.Contains(status.Convert(err).Message(), tc.text) {
					t.Fatalf("got %v, want %v with %q", err, tc.want, tc.text)
				}
				if tc.want == codes.OK && u.GetId() != 1 {
					t.Fatalf("reply user %d", u.GetId())
				}
				if s := c.lean.sess; s != nil {
					if _, isRaw := s.conn.(*rawio.Conn); isRaw != raw {
						t.Fatalf("connection %T, want raw %v", s.conn, raw)
					}
				}
			})
		}
	}
}

// plainLeanClient is leanClient over a *net.TCPConn: no queued writes.
func plainLeanClient(addr string, timeout time.Duration) *GRPCClient {
	d := &net.Dialer{Timeout: time.Second}
	c := &GRPCClient{lean: NewGRPCConn(addr, d.DialContext), timeout: timeout}
	c.call.done = make(chan struct{}, 1)
	return c
}

// startClosingScript is a scripted server that closes the connection
// right after answer's frames.
func startClosingScript(t *testing.T, answer script) string {
	t.Helper()
	return loadtest.ServeTCP(t, func(c net.Conn) { serveH2Script(t, c, 0, nil, answer, true) })
}

// TestGRPCLeanPingAck: a server's PING is answered with its data.
func TestGRPCLeanPingAck(t *testing.T) {
	acked := make(chan [8]byte, 1)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		c, err := ln.Accept()
		if err != nil {
			return
		}
		defer c.Close()
		h, err := loadtest.OpenFakeH2(c)
		if err != nil {
			return
		}
		fr, bw, hb, he := h.Fr, h.BW, &h.HB, h.HE
		for {
			f, err := fr.ReadFrame()
			if err != nil {
				return
			}
			switch f := f.(type) {
			case *http2.DataFrame:
				// PING first, and the reply only once it is acked.
				fr.WritePing(false, [8]byte{9, 8, 7, 6, 5, 4, 3, 2})
				bw.Flush()
				for {
					g, err := fr.ReadFrame()
					if err != nil {
						return
					}
					if p, ok := g.(*http2.PingFrame); ok && p.IsAck() {
						acked <- p.Data
						break
					}
				}
				replyUser(fr, hb, he, f.StreamID, 1)
				bw.Flush()
			}
		}
	}()
	c := leanClient(ln.Addr().String(), nil, 5*time.Second)
	defer c.lean.Close()
	if err := c.Invoke(context.Background(), pb.UserService_Get_FullMethodName, &pb.GetUserRequest{Id: 1}, new(pb.User)); err != nil {
		t.Fatal(err)
	}
	if got := <-acked; got != [8]byte{9, 8, 7, 6, 5, 4, 3, 2} {
		t.Fatalf("PING ack data %v", got)
	}
}

// TestGRPCLeanLimits: a request beyond the server's stream window is
// refused with the limit named; a server that is not HTTP/2 fails the
// handshake clearly.
func TestGRPCLeanLimits(t *testing.T) {
	addr := startH2Script(t, []http2.Setting{{ID: http2.SettingInitialWindowSize, Val: 100}},
		func(_ *testing.T, _ int, id uint32, fr *http2.Framer, hb *bytes.Buffer, he *hpack.Encoder) {
			replyUser(fr, hb, he, id, 1)
		})
	c := leanClient(addr, nil, 5*time.Second)
	defer c.lean.Close()
	err := c.Invoke(context.Background(), pb.EchoService_Echo_FullMethodName, &pb.EchoRequest{FirstMessage: strings.Repeat("x", 200)}, new(pb.EchoResponse))
	if codeOf(err) != codes.ResourceExhausted || !strings.Contains(err.Error(), "flow-control window") {
		t.Fatalf("large request: %v, want ResourceExhausted naming the window", err)
	}
	if err := c.Invoke(context.Background(), pb.UserService_Get_FullMethodName, &pb.GetUserRequest{Id: 1}, new(pb.User)); err != nil {
		t.Fatalf("small request after: %v", err)
	}

	http1 := startPlainHTTP1(t)
	c2 := leanClient(http1, nil, 5*time.Second)
	err = c2.Invoke(context.Background(), pb.UserService_Get_FullMethodName, &pb.GetUserRequest{Id: 1}, new(pb.User))
	if codeOf(err) != codes.Unavailable || !strings.Contains(err.Error(), "handshake") {
		t.Fatalf("HTTP/1.1 server: %v, want Unavailable naming the handshake", err)
	}
}

// startPlainHTTP1 answers anything with an HTTP/1.1 400, as an HTTP/1.1
// server does to the HTTP/2 preface.
func startPlainHTTP1(t *testing.T) string {
	return loadtest.ServeTCP(t, func(c net.Conn) {
		c.Read(make([]byte, 1024))
		io.WriteString(c, "HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\nConnection: close\r\n\r\n")
		c.Close()
	})
}

// FuzzGRPCLeanServerBytes: whatever a server sends after its SETTINGS,
// the call ends (with a status, or a decoded reply) and never panics or
// hangs past its deadline.
func FuzzGRPCLeanServerBytes(f *testing.F) {
	var good bytes.Buffer
	fr := http2.NewFramer(&good, nil)
	var hb bytes.Buffer
	he := hpack.NewEncoder(&hb)
	replyUser(fr, &hb, he, 1, 1)
	f.Add(good.Bytes())
	var ping bytes.Buffer
	fr = http2.NewFramer(&ping, nil)
	fr.WritePing(false, [8]byte{1})
	fr.WriteWindowUpdate(0, 100)
	f.Add(append(ping.Bytes(), good.Bytes()...))
	f.Add(good.Bytes()[:20])
	f.Add([]byte{0, 0, 0, 4, 0, 0, 0, 0, 0})
	f.Fuzz(func(t *testing.T, reply []byte) {
		client, server := net.Pipe()
		go func() {
			defer server.Close()
			go io.Copy(io.Discard, server)
			var sb bytes.Buffer
			http2.NewFramer(&sb, nil).WriteSettings()
			server.Write(sb.Bytes())
			server.Write(reply)
		}()
		used := false
		c := &GRPCClient{lean: NewGRPCConn("fuzz", func(context.Context, string, string) (net.Conn, error) {
			if used {
				return nil, errors.New("one connection only")
			}
			used = true
			return client, nil
		})}
		c.call.done = make(chan struct{}, 1)
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		start := time.Now()
		u := new(pb.User)
		err := c.Invoke(ctx, pb.UserService_Get_FullMethodName, &pb.GetUserRequest{Id: 1}, u)
		if testkit.Timing() && time.Since(start) > 5*time.Second {
			t.Fatalf("call took %v", time.Since(start))
		}
		if err != nil {
			if _, ok := status.FromError(err); !ok {
				t.Fatalf("error without a status: %v", err)
			}
		}
		c.lean.Close()
	})
}

// FuzzDecodeGRPCMessage: percent-encoding as gRPC servers write it
// decodes back to the bytes encoded; any input decodes without panicking.
func FuzzDecodeGRPCMessage(f *testing.F) {
	f.Add("no such user: ✓")
	f.Add("%")
	f.Add("100%25")
	f.Fuzz(func(t *testing.T, s string) {
		decodeGRPCMessage(s)
		var enc strings.Builder
		for i := 0; i < len(s); i++ {
			if b := s[i]; b < 0x20 || b > 0x7e || b == '%' {
				fmt.Fprintf(&enc, "%%%02X", b)
			} else {
				enc.WriteByte(b)
			}
		}
		if got := decodeGRPCMessage(enc.String()); got != s {
			t.Fatalf("decode(encode(%q)) = %q", s, got)
		}
	})
}

// flipDeadline is a context whose deadline is an hour away until past is
// set, and whose Done never closes: a deadline that has passed without
// the timer having fired yet, on demand.
type flipDeadline struct {
	context.Context
	past atomic.Bool
}

func (c *flipDeadline) Deadline() (time.Time, bool) {
	if c.past.Load() {
		return time.Now().Add(-time.Millisecond), true
	}
	return time.Now().Add(time.Hour), true
}

// TestGRPCLeanResetAfterDeadline: a server's RST_STREAM CANCEL that
// arrives once the call's deadline has passed, but before the client's
// own timer fired, is DeadlineExceeded (as grpc-go's client reports it:
// the server cancelled because the deadline passed); before the
// deadline, it is Canceled (TestGRPCLeanReplies).
func TestGRPCLeanResetAfterDeadline(t *testing.T) {
	ctx := &flipDeadline{Context: context.Background()}
	addr := startH2Script(t, nil, func(_ *testing.T, _ int, id uint32, fr *http2.Framer, _ *bytes.Buffer, _ *hpack.Encoder) {
		ctx.past.Store(true)
		fr.WriteRSTStream(id, http2.ErrCodeCancel)
	})
	c := leanClient(addr, nil, 0)
	defer c.lean.Close()
	err := c.Invoke(ctx, pb.UserService_Get_FullMethodName, &pb.GetUserRequest{Id: 1}, new(pb.User))
	if codeOf(err) != codes.DeadlineExceeded {
		t.Fatalf("got %v, want DeadlineExceeded", err)
	}
}

// TestLeanReaderWatch: the reader's context watch. A context's end wakes
// a read made under it, not one made under another context; a context
// that ended between readers (its AfterFunc found no reader) still makes
// the next read under it return at once.
func TestLeanReaderWatch(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		c, err := ln.Accept()
		if err == nil {
			defer c.Close()
			io.Copy(io.Discard, c) // never writes: every read blocks
		}
	}()
	conn, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	s := &h2Session{conn: conn}
	endRead := func() {
		s.wakeMu.Lock()
		s.readerCtx = nil
		s.wakeMu.Unlock()
	}
	// readFor reports whether a read returns within d (with a timeout).
	readFor := func(d time.Duration) bool {
		got := make(chan error, 1)
		go func() {
			var b [1]byte
			_, err := conn.Read(b[:])
			got <- err
		}()
		select {
		case err := <-got:
			if !isTimeout(err) {
				t.Fatalf("read: %v, want a timeout", err)
			}
			return true
		case <-time.After(d):
			// Unblock the reader for the next step.
			s.wakeMu.Lock()
			s.setReadDeadline(clientio.Wake)
			s.wakeMu.Unlock()
			<-got
			return false
		}
	}

	a, cancelA := context.WithCancel(context.Background())
	s.watch(a)
	endRead()
	cancelA() // ends between readers
	time.Sleep(20 * time.Millisecond)
	s.watch(a)
	if !readFor(time.Second) {
		t.Fatal("a read under a context that ended between readers blocked")
	}
	endRead()

	b, cancelB := context.WithCancel(context.Background())
	defer cancelB()
	c, cancelC := context.WithCancel(context.Background())
	s.watch(b)
	endRead()
	s.watch(c)
	cancelB() // not the reader's context
	if readFor(100 * time.Millisecond) {
		t.Fatal("another context's end woke the reader")
	}
	s.watch(c) // the same reader again, after the unblocking above
	time.AfterFunc(20*time.Millisecond, cancelC)
	if !readFor(time.Second) {
		t.Fatal("the reader's context ended and its read blocked")
	}
}

// TestGRPCLeanHeaderBlocks: header blocks stay right as they are reused
// and re-encoded. Against grpc-go, runs of one method and changes of
// method (each change inserts a :path, moving every index) get the right
// replies; against a server whose decoder keeps a 64-byte table, which
// our encoder must honour, every call decodes.
func TestGRPCLeanHeaderBlocks(t *testing.T) {
	addr, _ := startGRPC(t, 10)
	c := leanClient(addr, nil, 5*time.Second)
	defer c.lean.Close()
	ctx := context.Background()
	for i, m := range []string{"get", "get", "get", "get", "list", "get", "get", "list", "list", "list", "get", "echo", "echo", "get", "get", "get"} {
		switch m {
		case "get":
			id := int64(i%10 + 1)
			u := new(pb.User)
			if err := c.Invoke(ctx, pb.UserService_Get_FullMethodName, &pb.GetUserRequest{Id: id}, u); err != nil || u.GetId() != id {
				t.Fatalf("call %d, get %d: %v, id %d", i, id, err, u.GetId())
			}
		case "list":
			l := new(pb.UserList)
			if err := c.Invoke(ctx, pb.UserService_List_FullMethodName, &pb.ListUsersRequest{}, l); err != nil || len(l.GetUsers()) != 10 {
				t.Fatalf("call %d, list: %v, %d users", i, err, len(l.GetUsers()))
			}
		case "echo":
			e := new(pb.EchoResponse)
			if err := c.Invoke(ctx, pb.EchoService_Echo_FullMethodName, &pb.EchoRequest{FirstMessage: "a", SecondMessage: "b"}, e); err != nil || e.GetMessage() != "ab" {
				t.Fatalf("call %d, echo: %v, %q", i, err, e.GetMessage())
			}
		}
	}
	if !c.lean.sess.hdrStable {
		t.Error("three calls of one method in a row did not settle on a reusable header block")
	}

	small := startH2Script(t, []http2.Setting{{ID: http2.SettingHeaderTableSize, Val: 64}}, func(_ *testing.T, _ int, id uint32, fr *http2.Framer, hb *bytes.Buffer, he *hpack.Encoder) {
		replyUser(fr, hb, he, id, 1)
	})
	// A server that shrinks its table mid-connection: the next block must
	// be encoded afresh (announcing the size), not taken from the cache.
	var calls atomic.Int32
	shrinking := startH2Script(t, nil, func(_ *testing.T, _ int, id uint32, fr *http2.Framer, hb *bytes.Buffer, he *hpack.Encoder) {
		if calls.Add(1) == 3 {
			fr.WriteSettings(http2.Setting{ID: http2.SettingHeaderTableSize, Val: 64})
			fr.ReadMetaHeaders.SetAllowedMaxDynamicTableSize(64)
		}
		replyUser(fr, hb, he, id, 1)
	})
	c3 := leanClient(shrinking, nil, 5*time.Second)
	defer c3.lean.Close()
	for i := range 5 {
		if err := c3.Invoke(ctx, pb.UserService_Get_FullMethodName, &pb.GetUserRequest{Id: 1}, new(pb.User)); err != nil {
			t.Fatalf("call %d to a server that shrinks its header table: %v", i, err)
		}
		if i == 2 && c3.lean.sess.hdrStable {
			t.Fatal("the header block cache outlived the server's new table size")
		}
	}

	c2 := leanClient(small, nil, 5*time.Second)
	defer c2.lean.Close()
	for i, m := range []string{pb.UserService_Get_FullMethodName, pb.UserService_Get_FullMethodName, pb.UserService_Delete_FullMethodName, pb.UserService_Get_FullMethodName, pb.UserService_Get_FullMethodName, pb.UserService_Get_FullMethodName} {
		if err := c2.Invoke(ctx, m, &pb.GetUserRequest{Id: 1}, new(pb.User)); err != nil {
			t.Fatalf("call %d to a server with a 64-byte header table: %v", i, err)
		}
	}
}

// TestGRPCCallContext: a VU's calls share one timeout context while
// more than 90% of the timeout is left (one context and timer per tenth
// of the timeout, not per call); it is replaced once less is left, once
// it has ended, or for another parent, and its deadline is always within
// [0.9·timeout, timeout] of the call; close cancels it.
func TestGRPCCallContext(t *testing.T) {
	const timeout = 200 * time.Millisecond
	c := &GRPCClient{timeout: timeout}
	parent := context.Background()
	within := func(ctx context.Context) {
		t.Helper()
		d, ok := ctx.Deadline()
		left := time.Until(d)
		if !ok || left > timeout || left < timeout*9/10-5*time.Millisecond {
			t.Fatalf("deadline %v from now, want within [0.9, 1] × %v", left, timeout)
		}
	}
	a := c.CallCtx(parent)
	within(a)
	if b := c.CallCtx(parent); b != a {
		t.Fatal("a second call at once got a new context")
	}
	time.Sleep(timeout / 5) // past a tenth of the timeout
	b := c.CallCtx(parent)
	if b == a || a.Err() == nil {
		t.Fatal("the context was kept with less than 90% of the timeout left, or the old one was not cancelled")
	}
	within(b)
	other, cancel := context.WithCancel(parent)
	defer cancel()
	if d := c.CallCtx(other); d == b {
		t.Fatal("another parent got the same context")
	}
	e := c.CallCtx(other)
	cancel() // the parent ends: so does the shared context
	if e.Err() == nil {
		t.Fatal("the shared context outlived its parent")
	}
	if f := c.CallCtx(other); f == e {
		t.Fatal("an ended context was handed out again")
	}
	c.Close()
	if c.tctx.Err() == nil {
		t.Fatal("close left the context running")
	}
	if (&GRPCClient{}).CallCtx(parent) != parent {
		t.Fatal("without a timeout the call's context is its parent")
	}
}

// TestGRPCLeanOneReadPerCall: one call at a time costs one write(2) and
// one read(2), none of them failing with EAGAIN: the request is written
// by the read that then waits for its reply (rawio.Conn.Queue), as the
// HTTP/1.1 client does (issue 17). Calls made beside each other still get
// their replies (TestGRPCLeanSharedConnection).
func TestGRPCLeanOneReadPerCall(t *testing.T) {
	// A scripted server: each reply in one write, so it arrives whole and
	// the count is the client's alone (grpc-go's server may split a reply
	// in two writes when busy, and sends a BDP PING per call unless its
	// windows are static).
	addr := startH2Script(t, nil, func(_ *testing.T, _ int, id uint32, fr *http2.Framer, hb *bytes.Buffer, he *hpack.Encoder) {
		replyUser(fr, hb, he, id, 2)
	})
	c := leanClient(addr, nil, 5*time.Second)
	defer c.lean.Close()
	get := func() {
		if err := c.Invoke(context.Background(), pb.UserService_Get_FullMethodName, &pb.GetUserRequest{Id: 2}, new(pb.User)); err != nil {
			t.Fatal(err)
		}
	}
	get() // the connection's setup: settings, their acks, window updates
	raw := c.lean.sess.raw
	if raw == nil {
		t.Fatal("the lean client's connection is not a rawio.Conn")
	}
	before := raw.Stats()
	const calls = 200
	for range calls {
		get()
	}
	st := raw.Stats()
	reads, eagain, writes := st.Reads-before.Reads, st.EAGAIN-before.EAGAIN, st.Writes-before.Writes
	t.Logf("%d calls: %d reads (%d EAGAIN), %d writes", calls, reads, eagain, writes)
	if eagain > calls/10 || writes > calls+calls/10 || reads > calls+calls/5 {
		t.Errorf("%d calls made %d reads, %d of them EAGAIN, and %d writes; want about one read and one write per call, no EAGAIN", calls, reads, eagain, writes)
	}
}

// TestGRPCLeanConnectionWindow: requests beyond the connection's first
// 65,535 bytes of window go once the server's WINDOW_UPDATEs on stream 0
// return it; an update beyond 2^31-1 fails the connection
// (FLOW_CONTROL_ERROR, RFC 9113 §6.9.1).
func TestGRPCLeanConnectionWindow(t *testing.T) {
	big := &pb.User{Name: strings.Repeat("n", 30000)}
	addr := startH2Script(t, []http2.Setting{{ID: http2.SettingInitialWindowSize, Val: 1 << 20}},
		func(_ *testing.T, _ int, id uint32, fr *http2.Framer, hb *bytes.Buffer, he *hpack.Encoder) {
			replyUser(fr, hb, he, id, 1)
			fr.WriteWindowUpdate(0, 30100) // a request's worth, framing included
		})
	c := leanClient(addr, nil, 2*time.Second)
	defer c.lean.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	for i := range 5 { // 150 KB: more than twice the first window
		if err := c.Invoke(ctx, pb.UserService_Create_FullMethodName, big, new(pb.User)); err != nil {
			t.Fatalf("request %d of 30 KB: %v", i, err)
		}
	}

	addr = startH2Script(t, nil, func(_ *testing.T, _ int, id uint32, fr *http2.Framer, hb *bytes.Buffer, he *hpack.Encoder) {
		fr.WriteWindowUpdate(0, 1<<31-1)
		replyUser(fr, hb, he, id, 1)
	})
	c = leanClient(addr, nil, 2*time.Second)
	defer c.lean.Close()
	err := c.Invoke(ctx, pb.UserService_Get_FullMethodName, &pb.GetUserRequest{Id: 1}, new(pb.User))
	if codeOf(err) != codes.Unavailable || !strings.Contains(err.Error(), "FLOW_CONTROL") {
		t.Fatalf("window overflow: %v, want Unavailable naming FLOW_CONTROL", err)
	}
}
