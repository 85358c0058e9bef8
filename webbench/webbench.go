// Package webbench serves the in-browser benchmark: a page at /bench/ whose
// script (built from ../browser with esbuild, embedded here) calls the
// server with fetch+JSON, Connect and gRPC-Web (@connectrpc/connect-web)
// and through a WebSocket tunnel, timing each call with performance.now();
// the load engine drives it in headless chromium (load/browser.go).
//
// The tunnel for browsers (/bench/grpc-web-ws). A browser cannot put raw
// HTTP/2 inside a WebSocket with stock libraries (GoGRPCBridge's tunnel,
// package grpcws, carries a whole HTTP/2 connection: only a Go or native
// client can speak it). So this tunnel carries gRPC-Web framing in
// WebSocket messages: a call is one binary message
//
//	[u32 call id, big endian][u8 path length][path][gRPC-Web request body]
//
// where the path is a wirebench.v1 procedure (/wirebench.v1.UserService/Get)
// and the body is gRPC-Web's (5-byte enveloped messages). The server hands
// it, as an in-memory HTTP request, to the same handler that serves
// gRPC-Web on the REST port (connect-go), and sends what that handler
// writes back as messages
//
//	[u32 call id][a piece of the gRPC-Web response body]
//
// one per flush, the last holding the trailer frame (flag 0x80). Calls on
// one WebSocket run concurrently, multiplexed by id. What it saves over
// gRPC-Web on fetch is the per-call HTTP/1.1 request and response heads;
// what it costs is a WebSocket frame per message each way.
package webbench

import (
	"embed"
	"io/fs"
	"net/http"
	"strings"
	"time"
)

//go:embed static
var static embed.FS

// Options configures the handler; the zero value has the defaults.
type Options struct {
	// MaxDuration bounds one tunnel WebSocket's life (default 10 min).
	MaxDuration time.Duration
}

// Handler serves /bench/ and passes every other request to next.
type Handler struct {
	next  http.Handler
	files http.Handler
	opts  Options
}

// New returns the handler in front of next (the REST port's handler, with
// the gRPC-Web endpoints the page and the tunnel call).
func New(next http.Handler, opts Options) *Handler {
	if opts.MaxDuration <= 0 {
		opts.MaxDuration = DefaultMaxDuration
	}
	sub, err := fs.Sub(static, "static")
	if err != nil {
		panic(err) // the embedded tree is fixed at build time
	}
	return &Handler{next: next, files: http.StripPrefix("/bench/", http.FileServerFS(sub)), opts: opts}
}

// Prefix is where the page is served.
const Prefix = "/bench/"

func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	p := r.URL.Path
	switch {
	case p == TunnelPath:
		h.serveTunnel(w, r)
	case strings.HasPrefix(p, Prefix):
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			w.Header().Set("Allow", "GET, HEAD")
			http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
			return
		}
		// Cross-origin isolation gives the page performance.now() at 5 µs
		// resolution instead of 100 µs (the page reports whether it had it).
		w.Header().Set("Cross-Origin-Opener-Policy", "same-origin")
		w.Header().Set("Cross-Origin-Embedder-Policy", "require-corp")
		w.Header().Set("Cache-Control", "no-store")
		h.files.ServeHTTP(w, r)
	default:
		h.next.ServeHTTP(w, r)
	}
}
