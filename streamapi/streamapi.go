// Package streamapi is the streaming face of the REST port, mounted in
// front of package httpapi's handler: NDJSON and Server-Sent Events lists,
// a WebSocket echo, the wirebench.v1 gRPC services for browsers (gRPC-Web
// and the Connect protocol, and gRPC itself over h2c, through connect-go)
// and gRPC tunnelled over a WebSocket (package grpcws). Requests it does
// not serve go to the next handler unchanged.
//
//	GET /users, /todos       Accept: application/x-ndjson   one JSON record per line
//	GET /users, /todos       Accept: text/event-stream      SSE, as below
//	GET /users/events, /todos/events                        SSE: one event per record, then "end"
//	GET /ws/echo                                            WebSocket echo (JSON text or protobuf binary)
//	POST /wirebench.v1.{User,Todo,Echo}Service/{Method}     gRPC, gRPC-Web (binary and text), Connect
//	GET /grpc-ws                                            gRPC over WebSocket (Options.Tunnel)
package streamapi

import (
	"cmp"
	"context"
	"mime"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"connectrpc.com/connect"
	"google.golang.org/grpc"

	"github.com/wirebench/wirebench/grpcapi"
	"github.com/wirebench/wirebench/grpcws"
	"github.com/wirebench/wirebench/pb"
	"github.com/wirebench/wirebench/pb/pbconnect"
	"github.com/wirebench/wirebench/store"
)

// Media types of the streamed lists.
const (
	MediaNDJSON = "application/x-ndjson"
	MediaSSE    = "text/event-stream"
)

// DefaultMaxMessage bounds one Connect, gRPC-Web or gRPC message on the
// REST port when Options.MaxMessage is 0: the REST body limit's default.
const DefaultMaxMessage = 8 << 20

// Options configures a Handler; the zero value serves everything but the
// tunnel, with the default limits.
type Options struct {
	// MaxDuration bounds every stream this package serves (and the
	// streaming RPCs through connect-go); 0 is
	// grpcapi.DefaultMaxStreamDuration. At the limit a list stream is
	// cut (its end marker missing), an SSE follow ends with "end", a
	// WebSocket is closed, an RPC ends with DeadlineExceeded.
	MaxDuration time.Duration
	// MaxMessage bounds one message of a Connect, gRPC-Web or gRPC call,
	// decompressed; 0 is DefaultMaxMessage.
	MaxMessage int64
	// Tunnel, when set, serves /grpc-ws: each WebSocket is handed to it
	// (a *grpc.Server serves the listener). Nil: /grpc-ws goes to the
	// next handler (404).
	Tunnel *grpcws.Listener
	// FollowEvery is how often an SSE stream with ?follow=1 looks for new
	// users; 0 is 100 ms.
	FollowEvery time.Duration
	// KeepAliveEvery is how long a follow stream stays silent before it
	// sends a comment line; 0 is 15 s.
	KeepAliveEvery time.Duration
}

// Handler serves the streaming endpoints and passes the rest to next.
type Handler struct {
	st      *store.Memory
	next    http.Handler
	opts    Options
	rpc     func() *http.ServeMux // built on first use
	streams map[string]bool       // connect procedures that stream
	tunnel  http.Handler
}

// New returns a Handler on st in front of next.
func New(st *store.Memory, next http.Handler, opts Options) *Handler {
	opts.MaxDuration = cmp.Or(opts.MaxDuration, grpcapi.DefaultMaxStreamDuration)
	opts.MaxMessage = cmp.Or(opts.MaxMessage, DefaultMaxMessage)
	opts.FollowEvery = cmp.Or(opts.FollowEvery, 100*time.Millisecond)
	opts.KeepAliveEvery = cmp.Or(opts.KeepAliveEvery, 15*time.Second)
	h := &Handler{st: st, next: next, opts: opts, streams: map[string]bool{}}
	// The Connect handlers' tables (~0.8 MB, a third of the server's
	// live heap) are built on the first Connect or gRPC-Web request: a
	// server that never sees one neither holds them nor, through a larger
	// live heap, runs the GC more often on its REST path (issue 17).
	h.rpc = sync.OnceValue(func() *http.ServeMux {
		mux := http.NewServeMux()
		u, t, e := grpcapi.Services(st)
		copts := []connect.HandlerOption{connect.WithReadMaxBytes(int(opts.MaxMessage))}
		mux.Handle(pbconnect.NewUserServiceHandler(connectUsers{st: st, g: u}, copts...))
		mux.Handle(pbconnect.NewTodoServiceHandler(connectTodos{st: st, g: t}, copts...))
		mux.Handle(pbconnect.NewEchoServiceHandler(connectEcho{g: e}, copts...))
		return mux
	})
	// Every streaming RPC of wirebench.v1 gets the stream bounds (bound).
	// The gRPC service descriptions list them without protoreflect, whose
	// method list would unpack the whole file descriptor (13 kB of live
	// heap) in a server that may never serve protobuf.
	for _, sd := range []*grpc.ServiceDesc{&pb.UserService_ServiceDesc, &pb.TodoService_ServiceDesc, &pb.EchoService_ServiceDesc} {
		for _, m := range sd.Streams {
			h.streams["/"+sd.ServiceName+"/"+m.StreamName] = true
		}
	}
	if opts.Tunnel != nil {
		h.tunnel = grpcws.Handler(opts.Tunnel)
	}
	return h
}

func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	p := r.URL.Path
	switch {
	case strings.HasPrefix(p, "/wirebench.v1."):
		if h.streams[p] {
			var cancel context.CancelFunc
			r, cancel = h.bound(w, r)
			defer cancel()
		}
		if isGRPCWebText(r.Header.Get("Content-Type")) {
			serveGRPCWebText(h.rpc(), w, r)
			return
		}
		h.rpc().ServeHTTP(w, r)
		return
	case p == "/users" || p == "/todos":
		if r.Method == http.MethodGet || r.Method == http.MethodHead {
			switch streamKind(r.Header.Values("Accept")) {
			case MediaNDJSON:
				h.serveNDJSON(w, r, p == "/users")
				return
			case MediaSSE:
				h.serveSSE(w, r, p == "/users")
				return
			}
		}
	case p == "/users/events" || p == "/todos/events":
		if r.Method == http.MethodGet || r.Method == http.MethodHead {
			h.serveSSE(w, r, p == "/users/events")
		} else {
			w.Header().Set("Allow", "GET, HEAD")
			http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
		}
		return
	case p == "/ws/echo":
		h.serveWSEcho(w, r)
		return
	case p == "/grpc-ws" && h.tunnel != nil:
		h.tunnel.ServeHTTP(w, r)
		return
	}
	h.next.ServeHTTP(w, r)
}

// bound gives a stream MaxDuration from now: the request's context ends
// then, and the connection's (HTTP/2: the stream's) read and write
// deadlines move there from the server's per-request timeouts, so a long
// legitimate stream is not cut at the write timeout and a reader that
// stops reading is cut at MaxDuration, its buffers freed.
func (h *Handler) bound(w http.ResponseWriter, r *http.Request) (*http.Request, context.CancelFunc) {
	end := time.Now().Add(h.opts.MaxDuration)
	rc := http.NewResponseController(w)
	// The socket's deadlines are endGrace later, so a stream that reaches
	// MaxDuration can still write its end marker (the read deadline too:
	// net/http cancels the request's context when a read fails).
	_ = rc.SetWriteDeadline(end.Add(endGrace)) // not every writer supports it (tests' recorders)
	_ = rc.SetReadDeadline(end.Add(endGrace))
	ctx, cancel := context.WithDeadline(r.Context(), end)
	return r.WithContext(ctx), cancel
}

// endGrace is the time after MaxDuration a stream has to write its end.
const endGrace = time.Second

// streamKind picks MediaNDJSON or MediaSSE when the Accept headers rank
// one of them at least as high as anything else they accept ("" when
// not): an explicit stream type wins ties with */* and the list formats,
// which httpapi serves. Elements that do not parse are skipped.
func streamKind(accept []string) string {
	// Most requests (every list of the CRUD benchmarks) name no stream
	// type: answer them without parsing or allocating.
	named := false
	for _, h := range accept {
		named = named || containsFold(h, "ndjson") || containsFold(h, "jsonl") || containsFold(h, "event-stream")
	}
	if !named {
		return ""
	}
	best, bestQ, otherQ := "", 0.0, 0.0
	for _, h := range accept {
		for part := range strings.SplitSeq(h, ",") {
			mt, params, err := mime.ParseMediaType(strings.TrimSpace(part))
			if err != nil {
				continue
			}
			q := 1.0
			if s, ok := params["q"]; ok {
				if q, err = strconv.ParseFloat(s, 64); err != nil || q < 0 || q > 1 {
					continue
				}
			}
			switch mt {
			case MediaNDJSON, "application/ndjson", "application/jsonl":
				mt = MediaNDJSON
			case MediaSSE:
			default:
				otherQ = max(otherQ, q)
				continue
			}
			if q > bestQ {
				best, bestQ = mt, q
			}
		}
	}
	if bestQ > 0 && bestQ >= otherQ {
		return best
	}
	return ""
}

// containsFold is strings.Contains ignoring ASCII case, without allocating.
func containsFold(s, sub string) bool {
	for i := 0; i+len(sub) <= len(s); i++ {
		if strings.EqualFold(s[i:i+len(sub)], sub) {
			return true
		}
	}
	return false
}
