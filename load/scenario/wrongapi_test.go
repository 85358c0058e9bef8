package scenario_test

import (
	"bytes"
	"context"
	"encoding/json"
	"net"
	"net/http"
	"net/http/httptest"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/klauspost/compress/gzip"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/wirebench/wirebench/api"
	"github.com/wirebench/wirebench/grpcapi"
	"github.com/wirebench/wirebench/httpapi"
	"github.com/wirebench/wirebench/pb"
	"github.com/wirebench/wirebench/store"
)

// Replies a corruption can target: the reference API's user and echo
// operations, named the same on REST and gRPC.
const (
	replyList   = "list"
	replyCreate = "create"
	replyGet    = "get"
	replyUpdate = "update"
	replyEcho   = "echo"
)

// corruption rewrites one kind of reply after the real handler produced
// it. The content-changing hooks keep the status, so only a check that
// reads the body can tell; the others break the exchange itself.
type corruption struct {
	reply string
	// skip leaves the first replies of that kind alone: the scenario's
	// dataset snapshot is the first list.
	skip int
	user func(*api.User)
	list func(*api.UserList)
	echo func(*api.EchoResponse)
	// REST only: replace the status, or the body (raw bytes), or gzip the
	// body without the client having asked.
	status    int
	body      []byte
	gzipUnask bool
	// hangUp answers no HTTP at all: a malformed status line on HTTP/1.1,
	// a reset stream on h2c.
	hangUp bool
	// gRPC only: fail the call with this code, or stall it past the
	// client's deadline (a server that ignores grpc-timeout: one that
	// honours it may answer DEADLINE_EXCEEDED just before the client's
	// own deadline, which the client rightly counts as a gRPC error).
	code  codes.Code
	stall bool
}

// wrongAPI is the real reference API (httpapi and grpcapi over a seeded
// store, on 127.0.0.1:0) behind a hook that applies one corruption.
type wrongAPI struct {
	Store    *store.Memory
	HTTPAddr string
	GRPCAddr string

	mu   sync.Mutex
	c    corruption
	seen int // replies of kind c.reply so far
}

func startWrongAPI(t *testing.T, users int, c corruption) *wrongAPI {
	t.Helper()
	st := store.NewMemory(store.Options{})
	if err := st.Seed(users, 0); err != nil {
		t.Fatal(err)
	}
	h, err := httpapi.New(st, httpapi.Options{})
	if err != nil {
		t.Fatal(err)
	}
	w := &wrongAPI{Store: st, c: c}
	hln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var protos http.Protocols
	protos.SetHTTP1(true)
	protos.SetUnencryptedHTTP2(true)
	hs := &http.Server{Protocols: &protos, Handler: w.rest(h)}
	go hs.Serve(hln)
	t.Cleanup(func() { hs.Close() })
	w.HTTPAddr = hln.Addr().String()

	gln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	gs := grpc.NewServer(grpc.UnaryInterceptor(w.intercept))
	grpcapi.Register(gs, st)
	go gs.Serve(gln)
	t.Cleanup(gs.Stop)
	w.GRPCAddr = gln.Addr().String()
	return w
}

// hit reports whether this reply of kind reply is to be corrupted.
func (w *wrongAPI) hit(reply string) bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	if reply == "" || reply != w.c.reply {
		return false
	}
	w.seen++
	return w.seen > w.c.skip
}

func restReply(r *http.Request) string {
	switch {
	case r.URL.Path == "/users" && r.Method == "GET":
		return replyList
	case r.URL.Path == "/users" && r.Method == "POST":
		return replyCreate
	case r.URL.Path == "/echo":
		return replyEcho
	case r.Method == "GET":
		return replyGet
	case r.Method == "PUT":
		return replyUpdate
	}
	return ""
}

// rest serves h, then rewrites the reply if the corruption targets it.
// Bodies are JSON (the tests' format) and re-encoded with encoding/json.
func (w *wrongAPI) rest(h http.Handler) http.Handler {
	return http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		hit := w.hit(restReply(r))
		if hit && w.c.hangUp {
			if hj, ok := rw.(http.Hijacker); ok && r.ProtoMajor == 1 {
				conn, buf, err := hj.Hijack()
				if err == nil {
					buf.WriteString("HTTP/1.1 two hundred OK\r\n\r\n")
					buf.Flush()
					conn.Close()
				}
				return
			}
			panic(http.ErrAbortHandler) // h2: the server resets the stream
		}
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, r)
		body, code := rec.Body.Bytes(), rec.Code
		if hit {
			body, code = w.rewrite(rw, body, code)
		}
		for k, v := range rec.Header() {
			if k != "Content-Length" {
				rw.Header()[k] = v
			}
		}
		rw.Header().Set("Content-Length", strconv.Itoa(len(body)))
		rw.WriteHeader(code)
		rw.Write(body)
	})
}

func (w *wrongAPI) rewrite(rw http.ResponseWriter, body []byte, code int) ([]byte, int) {
	c := w.c
	recode := func(v any, f func()) []byte {
		if err := json.Unmarshal(body, v); err != nil {
			panic("wrongAPI: reply is not JSON: " + err.Error())
		}
		f()
		b, err := json.Marshal(v)
		if err != nil {
			panic(err)
		}
		return b
	}
	switch {
	case c.user != nil:
		var u api.User
		body = recode(&u, func() { c.user(&u) })
	case c.list != nil:
		var l api.UserList
		body = recode(&l, func() { c.list(&l) })
	case c.echo != nil:
		var e api.EchoResponse
		body = recode(&e, func() { c.echo(&e) })
	case c.body != nil:
		body = c.body
	case c.gzipUnask:
		var b bytes.Buffer
		zw := gzip.NewWriter(&b)
		zw.Write(body)
		zw.Close()
		body = b.Bytes()
		rw.Header().Set("Content-Encoding", "gzip")
	}
	if c.status != 0 {
		code = c.status
	}
	return body, code
}

// intercept is the gRPC side of the hook.
func (w *wrongAPI) intercept(ctx context.Context, req any, info *grpc.UnaryServerInfo, handler grpc.UnaryHandler) (any, error) {
	resp, err := handler(ctx, req)
	reply := map[string]string{
		"/wirebench.v1.UserService/List":   replyList,
		"/wirebench.v1.UserService/Create": replyCreate,
		"/wirebench.v1.UserService/Get":    replyGet,
		"/wirebench.v1.UserService/Update": replyUpdate,
		"/wirebench.v1.EchoService/Echo":   replyEcho,
	}[info.FullMethod]
	if err != nil || !w.hit(reply) {
		return resp, err
	}
	c := w.c
	if c.stall {
		<-ctx.Done()
		time.Sleep(time.Second)
		return nil, status.FromContextError(ctx.Err()).Err()
	}
	if c.code != codes.OK {
		return nil, status.Error(c.code, "wrongAPI")
	}
	switch m := resp.(type) {
	case *pb.User:
		if c.user != nil {
			var u api.User
			pb.ToUser(m, &u)
			c.user(&u)
			return pb.FromUser(&u), nil
		}
	case *pb.UserList:
		if c.list != nil {
			var l api.UserList
			pb.ToUserList(m, &l)
			c.list(&l)
			return pb.FromUserList(&l), nil
		}
	case *pb.EchoResponse:
		if c.echo != nil {
			var e api.EchoResponse
			e.Message = m.GetMessage()
			c.echo(&e)
			return &pb.EchoResponse{Message: e.Message}, nil
		}
	}
	panic("wrongAPI: corruption does not apply to " + info.FullMethod)
}
