// Package browserwire measures the libraries behind the REST port's
// browser transports against their alternatives (a module of its own so
// the alternatives stay out of wirebench's go.mod):
//
//   - gRPC-Web: connect-go's handler (what serve mounts, streamapi) vs
//     improbable-eng/grpc-web's wrapper around the same grpc.Server, server
//     side only (the handler called in-process, no socket): a unary
//     UserService/Get and a Stream of 1000 users.
//
//   - WebSocket: coder/websocket (what serve uses) vs gorilla/websocket,
//     an echo of 100 messages over loopback, client and server of the
//     same library.
//
//     cd bench/browserwire && flock /tmp/wirebench-load.lock go test -bench . -benchmem -count 5
package browserwire

import (
	"bytes"
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/coder/websocket"
	gorilla "github.com/gorilla/websocket"
	improbable "github.com/improbable-eng/grpc-web/go/grpcweb"
	"google.golang.org/protobuf/proto"

	"github.com/wirebench/wirebench/grpcapi"
	"github.com/wirebench/wirebench/grpcweb"
	"github.com/wirebench/wirebench/pb"
	"github.com/wirebench/wirebench/store"
	"github.com/wirebench/wirebench/streamapi"
)

// sink is a ResponseWriter that keeps the body for one check and then
// only counts it, so the measurement is the handler's own cost.
type sink struct {
	h    http.Header
	keep bool
	body bytes.Buffer
	n    int
}

func (s *sink) Header() http.Header { return s.h }
func (s *sink) WriteHeader(int)     {}
func (s *sink) Flush()              {}
func (s *sink) Write(p []byte) (int, error) {
	s.n += len(p)
	if s.keep {
		s.body.Write(p)
	}
	return len(p), nil
}

func handlers(b *testing.B, users int) map[string]http.Handler {
	st := store.NewMemory(store.Options{})
	if err := st.Seed(users, 0); err != nil {
		b.Fatal(err)
	}
	gs := grpcapi.NewServer(st)
	b.Cleanup(gs.Stop)
	return map[string]http.Handler{
		"connect-go":             streamapi.New(st, http.NotFoundHandler(), streamapi.Options{}),
		"improbable-eng-grpcweb": improbable.WrapServer(gs),
	}
}

func call(h http.Handler, path string, body []byte, keep bool) *sink {
	r := httptest.NewRequest(http.MethodPost, path, bytes.NewReader(body))
	r.Header.Set("Content-Type", "application/grpc-web+proto")
	r.Header.Set("X-Grpc-Web", "1")
	w := &sink{h: http.Header{}, keep: keep}
	h.ServeHTTP(w, r)
	return w
}

// check reads a gRPC-Web body: want data frames, then grpc-status 0.
func check(b *testing.B, name string, body []byte, want int) {
	r := grpcweb.NewReader(bytes.NewReader(body), 1<<20)
	for i := 0; ; i++ {
		flags, p, err := r.Next()
		if err != nil {
			b.Fatalf("%s: frame %d: %v (%q)", name, i, err, body)
		}
		if flags&grpcweb.FlagTrailer != 0 {
			tr, err := grpcweb.ParseTrailers(p)
			if err != nil || tr.Get("grpc-status") != "0" || i != want {
				b.Fatalf("%s: %d messages, trailers %q %v", name, i, p, err)
			}
			return
		}
		var u pb.User
		if err := proto.Unmarshal(p, &u); err != nil || u.Id != int64(i+1) {
			b.Fatalf("%s: message %d: %v %v", name, i, &u, err)
		}
	}
}

func BenchmarkGRPCWebGet(b *testing.B) {
	m, _ := proto.Marshal(&pb.GetUserRequest{Id: 1})
	body := grpcweb.AppendFrame(nil, 0, m)
	for name, h := range handlers(b, 100) {
		b.Run(name, func(b *testing.B) {
			check(b, name, call(h, "/wirebench.v1.UserService/Get", body, true).body.Bytes(), 1)
			b.ReportAllocs()
			for b.Loop() {
				call(h, "/wirebench.v1.UserService/Get", body, false)
			}
		})
	}
}

func BenchmarkGRPCWebStream1000(b *testing.B) {
	body := grpcweb.AppendFrame(nil, 0, nil)
	for name, h := range handlers(b, 1000) {
		b.Run(name, func(b *testing.B) {
			w := call(h, "/wirebench.v1.UserService/Stream", body, true)
			check(b, name, w.body.Bytes(), 1000)
			b.ReportAllocs()
			b.SetBytes(int64(w.n))
			for b.Loop() {
				call(h, "/wirebench.v1.UserService/Stream", body, false)
			}
		})
	}
}

const echoes = 100

func BenchmarkWebSocketEcho100(b *testing.B) {
	msg := []byte(`{"first_message":"Hello, ","second_message":"World!"}`)
	b.Run("coder-websocket", func(b *testing.B) {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			c, err := websocket.Accept(w, r, nil)
			if err != nil {
				return
			}
			defer c.CloseNow()
			for {
				typ, p, err := c.Read(r.Context())
				if err != nil || c.Write(r.Context(), typ, p) != nil {
					return
				}
			}
		}))
		defer srv.Close()
		ctx := context.Background()
		c, _, err := websocket.Dial(ctx, "ws"+strings.TrimPrefix(srv.URL, "http"), nil)
		if err != nil {
			b.Fatal(err)
		}
		defer c.CloseNow()
		b.ReportAllocs()
		for b.Loop() {
			for range echoes {
				if err := c.Write(ctx, websocket.MessageText, msg); err != nil {
					b.Fatal(err)
				}
				if _, p, err := c.Read(ctx); err != nil || len(p) != len(msg) {
					b.Fatal(err)
				}
			}
		}
	})
	b.Run("gorilla-websocket", func(b *testing.B) {
		up := gorilla.Upgrader{}
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			c, err := up.Upgrade(w, r, nil)
			if err != nil {
				return
			}
			defer c.Close()
			for {
				typ, p, err := c.ReadMessage()
				if err != nil || c.WriteMessage(typ, p) != nil {
					return
				}
			}
		}))
		defer srv.Close()
		c, _, err := gorilla.DefaultDialer.Dial("ws"+strings.TrimPrefix(srv.URL, "http"), nil)
		if err != nil {
			b.Fatal(err)
		}
		defer c.Close()
		b.ReportAllocs()
		for b.Loop() {
			for range echoes {
				if err := c.WriteMessage(gorilla.TextMessage, msg); err != nil {
					b.Fatal(err)
				}
				if _, p, err := c.ReadMessage(); err != nil || len(p) != len(msg) {
					b.Fatal(err)
				}
			}
		}
	})
}
