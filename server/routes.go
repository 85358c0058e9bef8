package server

import (
	"net/http"
	"strings"

	"github.com/wirebench/wirebench/httpapi"
	"github.com/wirebench/wirebench/kvhttp"
	"github.com/wirebench/wirebench/pb"
	"github.com/wirebench/wirebench/store"
	"github.com/wirebench/wirebench/streamapi"
	"github.com/wirebench/wirebench/webbench"
)

// routes is the REST port's one routing table: every face of the net/http
// engine (REST, KV, bulk, streams, the web bench, the gRPC tunnel) mounted
// side by side and found by one lookup — the request's path among the
// exact routes, else its first segment among the subtrees — instead of
// each face asking "mine?" and passing the request to the next. The REST
// API (users, todos, echo, and the 404 of every unknown path) is the rest.
//
// Paths are matched as they came (no cleaning, no redirects, unlike
// http.ServeMux): a KV key may hold "//" or "..".
type routes struct {
	exact    map[string]http.Handler // "/airports"
	subtree  map[string]http.Handler // first segment: "kv" serves /kv/...
	prefixes []prefixRoute           // the few trees without a fixed first segment
	rest     http.Handler
}

type prefixRoute struct {
	prefix string
	h      http.Handler
}

func newRoutes(rest http.Handler) *routes {
	return &routes{exact: map[string]http.Handler{}, subtree: map[string]http.Handler{}, rest: rest}
}

func (rt *routes) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	rt.route(r.URL.Path).ServeHTTP(w, r)
}

func (rt *routes) route(p string) http.Handler {
	if h, ok := rt.exact[p]; ok {
		return h
	}
	if len(p) > 1 {
		seg := p[1:]
		if i := strings.IndexByte(seg, '/'); i >= 0 {
			if h, ok := rt.subtree[seg[:i]]; ok {
				return h
			}
		}
	}
	for _, pr := range rt.prefixes {
		if strings.HasPrefix(p, pr.prefix) {
			return pr.h
		}
	}
	return rt.rest
}

// routes mounts every face of the net/http engine on one table (routes.go).
func (s *Server) routes(st *store.Memory, api *httpapi.Server, bulk http.Handler, guard kvhttp.Guard, opts Options) http.Handler {
	maxBody := opts.HTTP.MaxBody
	if maxBody <= 0 {
		maxBody = httpapi.DefaultMaxBody
	}
	rt := newRoutes(api)
	// kvhttp serves /kv/ and /metrics: the REST API's figures, then the
	// KV store's.
	kvh := kvhttp.Mount(s.KV, api, kvhttp.Options{MaxBody: maxBody, Guard: guard})
	rt.subtree["kv"] = kvh
	rt.exact["/metrics"] = kvh
	// The streams: list streams on /users and /todos (by Accept; the rest
	// of those requests pass to the REST API), SSE, WebSockets, Connect
	// and gRPC-Web, the gRPC tunnel.
	sh := streamapi.New(st, api, streamapi.Options{MaxDuration: opts.MaxStreamDuration, MaxMessage: maxBody, Tunnel: s.tunnel})
	for _, p := range []string{"/users", "/todos", "/users/events", "/todos/events", "/ws/echo"} {
		rt.exact[p] = sh
	}
	if s.tunnel != nil {
		rt.exact["/grpc-ws"] = sh
	}
	rt.prefixes = append(rt.prefixes, prefixRoute{"/" + pbPackage + ".", sh})
	// The web bench's page, and its tunnel, whose calls go through the
	// whole table like any other request.
	wb := webbench.New(rt, webbench.Options{MaxDuration: opts.MaxStreamDuration})
	rt.subtree["bench"] = wb
	rt.exact[webbench.TunnelPath] = wb
	if bulk != nil {
		rt.exact["/airports"] = bulk
	}
	return rt
}

// pbPackage is the gRPC services' package ("wirebench.v1"), from a
// service description: protoreflect would unpack the whole file
// descriptor (streamapi avoids it for the same reason).
var pbPackage = pb.UserService_ServiceDesc.ServiceName[:strings.LastIndexByte(pb.UserService_ServiceDesc.ServiceName, '.')]
