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
// side by side, found by one lookup of the request's first path segment
// instead of each face asking "mine?" and passing the request on. The REST
// API (users, todos, echo, and the 404 of every unknown path) is the rest.
//
// Paths are matched as they came (no cleaning, no redirects, unlike
// http.ServeMux): a KV key may hold "//" or "..".
type routes struct {
	// segs by first segment ("users" for /users, /users/1, /users/events):
	// a dozen short strings, searched in order, which costs less than
	// hashing the segment for a map (BenchmarkRESTGetDispatch).
	segs     []segRoute
	prefixes []prefixRoute // the few trees without a fixed first segment
	rest     http.Handler
}

// segRoute is what one first segment routes to; nil fields go to the rest.
type segRoute struct {
	seg   string
	self  http.Handler  // the path "/seg" itself
	paths []prefixRoute // exact paths under "/seg/" (few), before tree
	tree  http.Handler  // every other path under "/seg/"
}

type prefixRoute struct {
	prefix string
	h      http.Handler
}

func newRoutes(rest http.Handler) *routes {
	return &routes{rest: rest}
}

// split cuts "/seg/more" into "seg" and whether a '/' follows it.
func split(p string) (seg string, under bool) {
	if len(p) < 2 || p[0] != '/' {
		return "", false
	}
	seg = p[1:]
	if i := strings.IndexByte(seg, '/'); i >= 0 {
		return seg[:i], true
	}
	return seg, false
}

func (rt *routes) lookup(seg string) *segRoute {
	for i := range rt.segs {
		if rt.segs[i].seg == seg {
			return &rt.segs[i]
		}
	}
	return nil
}

// entry is seg's route, added if new; valid until the next entry call.
func (rt *routes) entry(seg string) *segRoute {
	if e := rt.lookup(seg); e != nil {
		return e
	}
	rt.segs = append(rt.segs, segRoute{seg: seg})
	return &rt.segs[len(rt.segs)-1]
}

// exact routes the path p alone to h.
func (rt *routes) exact(p string, h http.Handler) {
	seg, under := split(p)
	if e := rt.entry(seg); under {
		e.paths = append(e.paths, prefixRoute{p, h})
	} else {
		e.self = h
	}
}

// tree routes every path under "/seg/" to h.
func (rt *routes) tree(seg string, h http.Handler) { rt.entry(seg).tree = h }

func (rt *routes) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	rt.route(r.URL.Path).ServeHTTP(w, r)
}

func (rt *routes) route(p string) http.Handler {
	// The segment is matched in place (no split): this runs per request.
	for i := range rt.segs {
		e := &rt.segs[i]
		n := 1 + len(e.seg)
		if len(p) < n || p[1:n] != e.seg || p[0] != '/' {
			continue
		}
		if len(p) == n {
			if e.self != nil {
				return e.self
			}
			return rt.rest
		}
		if p[n] != '/' {
			continue
		}
		for _, pr := range e.paths {
			if p == pr.prefix {
				return pr.h
			}
		}
		if e.tree != nil {
			return e.tree
		}
		return rt.rest
	}
	for _, pr := range rt.prefixes {
		if strings.HasPrefix(p, pr.prefix) {
			return pr.h
		}
	}
	return rt.rest
}

// routes mounts every face of the net/http engine on one table (routes.go).
func (s *Server) routes(st *store.Memory, api, bulk http.Handler, guard kvhttp.Guard, opts Options) http.Handler {
	maxBody := opts.HTTP.MaxBody
	if maxBody <= 0 {
		maxBody = httpapi.DefaultMaxBody
	}
	rt := newRoutes(api)
	// Searched in this order: the REST API's own paths first.
	// The streams: list streams on /users and /todos (by Accept; the rest
	// of those requests pass to the REST API), SSE, WebSockets, Connect
	// and gRPC-Web, the gRPC tunnel.
	sh := streamapi.New(st, api, streamapi.Options{MaxDuration: opts.MaxStreamDuration, MaxMessage: maxBody, Tunnel: s.tunnel})
	for _, p := range []string{"/users", "/todos", "/users/events", "/todos/events", "/ws/echo"} {
		rt.exact(p, sh)
	}
	if s.tunnel != nil {
		rt.exact("/grpc-ws", sh)
	}
	// kvhttp serves /kv/ and /metrics: the REST API's figures, then the
	// KV store's.
	kvh := kvhttp.Mount(s.KV, api, kvhttp.Options{MaxBody: maxBody, Guard: guard})
	rt.tree("kv", kvh)
	rt.exact("/metrics", kvh)
	rt.prefixes = append(rt.prefixes, prefixRoute{"/" + pbPackage + ".", sh})
	// The web bench's page, and its tunnel, whose calls go through the
	// whole table like any other request.
	wb := webbench.New(rt, webbench.Options{MaxDuration: opts.MaxStreamDuration})
	rt.tree("bench", wb)
	rt.exact(webbench.TunnelPath, wb)
	if bulk != nil {
		rt.exact("/airports", bulk)
	}
	return rt
}

// pbPackage is the gRPC services' package ("wirebench.v1"), from a
// service description: protoreflect would unpack the whole file
// descriptor (streamapi avoids it for the same reason).
var pbPackage = pb.UserService_ServiceDesc.ServiceName[:strings.LastIndexByte(pb.UserService_ServiceDesc.ServiceName, '.')]
