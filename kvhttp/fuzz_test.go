package kvhttp

import (
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/valyala/fasthttp"

	"github.com/wirebench/wirebench/codec"
)

var pathSeeds = []string{
	"/kv/a", "/kv/a%2Fb", "/%6Bv/x", "/kv%2Fa", "/kv/%zz", "/kv/a%25b", "/kv//x", "/kv/a/../b",
	"/kv/sp%20ace", "/kv/%6Beys", "/kv/keys", "/kv/", "/kv", "/users/1", "/kv/a?ttl_ms=1", "/%6b%76/%6d%73%65%74",
	"/kv/{x}", "/kv/a+b", "/kv/%2B", "/kv/\xff", "/kv/a;b=c",
}

// FuzzKeyFromPath: from one request-target, the fasthttp front (kvPath and
// escapedPath on fasthttp's original path, restOf, unescapeKey) routes to
// /kv/ and names
// the same key as the net/http front (r.URL.Path, kvRest, unescapeKey),
// or both refuse it.
func FuzzKeyFromPath(f *testing.F) {
	for _, s := range pathSeeds {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, target string) {
		if !strings.HasPrefix(target, "/") || strings.ContainsAny(target, "# \t\r\n") {
			return // not an origin-form target a client sends
		}
		u, err := url.ParseRequestURI(target)
		if err != nil {
			return // net/http answers 400 before any handler
		}
		var fu fasthttp.URI
		if err := fu.Parse(nil, []byte(target)); err != nil {
			return
		}
		p := fu.PathOriginal()
		netKV := strings.HasPrefix(u.Path, "/kv/")
		if fastKV := kvPath(p); netKV != fastKV {
			t.Fatalf("%q: /kv/ route on net/http %v, on fasthttp %v (path %q)", target, netKV, fastKV, p)
		}
		if !netKV {
			return
		}
		rest1, ok1 := kvRest(&http.Request{URL: u})
		rest2, ok2 := restOf(escapedPath(p))
		if ok1 != ok2 {
			t.Fatalf("%q: rest found on net/http %v, on fasthttp %v", target, ok1, ok2)
		}
		if !ok1 {
			return
		}
		if (rest1 == "keys") != (rest2 == "keys") || (rest1 == "mset") != (rest2 == "mset") || (rest1 == "mget") != (rest2 == "mget") {
			t.Fatalf("%q: routes differ: %q, %q", target, rest1, rest2)
		}
		k1, e1 := unescapeKey(rest1)
		k2, e2 := unescapeKey(rest2)
		if (e1 == nil) != (e2 == nil) || k1 != k2 {
			t.Fatalf("%q: key %q (%v) on net/http, %q (%v) on fasthttp", target, k1, e1, k2, e2)
		}
		// The net/http front's shortcut names the key EscapedPath does.
		want, okw := restOf(u.EscapedPath())
		kw, ew := unescapeKey(want)
		if okw != ok1 || (ew == nil) != (e1 == nil) || kw != k1 {
			t.Fatalf("%q: key %q (%v), through EscapedPath %q (%v)", target, k1, e1, kw, ew)
		}
	})
}

// acceptedBefore is accepted as it was, with strings.Split.
func acceptedBefore(accept string, def format) (f format, raw bool, ok bool) {
	if strings.TrimSpace(accept) == "" {
		return def, false, true
	}
	for _, part := range strings.Split(accept, ",") {
		mt := codec.BaseMediaType(part)
		switch mt {
		case mediaRaw:
			return def, true, true
		case "*/*", "application/*":
			return def, false, true
		}
		if f, ok := formatFor(mt); ok {
			return f, false, true
		}
	}
	return nil, false, false
}

// FuzzHeaderParsing: Accept and Content-Type read as they were read
// before the hot path lost its allocations.
func FuzzHeaderParsing(f *testing.F) {
	for _, s := range []string{"", "application/octet-stream", " Application/Octet-Stream ; q=1", "text/html, application/json;q=0.5",
		"application/octet-stream, application/json", "*/*", ",,", "text/unknown", "application/x-protobuf,", "application/octet-stream;"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, h string) {
		f1, r1, o1 := accepted(h, jsonFormat)
		f2, r2, o2 := acceptedBefore(h, jsonFormat)
		if r1 != r2 || o1 != o2 || (f1 == nil) != (f2 == nil) || (f1 != nil && f1.media() != f2.media()) {
			t.Fatalf("Accept %q: %v %v %v, before %v %v %v", h, f1, r1, o1, f2, r2, o2)
		}
		before := strings.EqualFold(strings.TrimSpace(strings.SplitN(h, ";", 2)[0]), mediaRaw)
		if isRawType(h) != before {
			t.Fatalf("Content-Type %q: raw %v, before %v", h, isRawType(h), before)
		}
	})
}
