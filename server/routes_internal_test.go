package server

import (
	"net/http"
	"testing"
)

type face string

func (face) ServeHTTP(http.ResponseWriter, *http.Request) {}

// One table decides every path: exact routes, then the first segment's
// subtree, then the few prefixes, else the REST API; paths as they came.
func TestRoutesTable(t *testing.T) {
	rt := newRoutes(face("rest"))
	rt.exact("/airports", face("bulk"))
	rt.exact("/users", face("streams"))
	rt.exact("/users/events", face("events"))
	rt.tree("kv", face("kv"))
	rt.tree("bench", face("bench"))
	rt.exact("/bench/tunnel", face("tunnel"))
	rt.prefixes = []prefixRoute{{"/wirebench.v1.", face("streams")}}
	for path, want := range map[string]face{
		"/airports": "bulk", "/airports/": "rest", "/airports/x": "rest",
		"/users": "streams", "/users/1": "rest", "/users/": "rest", "/users/events": "events", "/users/events/x": "rest",
		"/kv/a": "kv", "/kv/": "kv", "/kv//a/../b": "kv", "/kv": "rest", "/kvx/a": "rest",
		"/bench/": "bench", "/bench/x.js": "bench", "/bench": "rest", "/bench/tunnel": "tunnel",
		"/wirebench.v1.EchoService/Echo": "streams", "/wirebench.v1.Nope/X": "streams",
		"/": "rest", "": "rest", "//": "rest", "/echo": "rest", "x/kv/a": "rest",
	} {
		if got := rt.route(path); got != want {
			t.Errorf("%q: %v, want %v", path, got, want)
		}
	}
	if pbPackage != "wirebench.v1" {
		t.Fatalf("pbPackage %q", pbPackage)
	}
}
