package kvhttp

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/wirebench/wirebench/kv"
	"github.com/wirebench/wirebench/kv/access"
)

type route struct{ method, path, body string }

// routes are every /kv/ route, replication's included.
var routes = []route{
	{"GET", "/kv/k", ""}, {"HEAD", "/kv/k", ""}, {"PUT", "/kv/k", "v"}, {"DELETE", "/kv/k", ""},
	{"POST", "/kv/mget", `{"keys":["k"]}`}, {"POST", "/kv/mset", `{"items":[{"key":"k","value":"dg=="}]}`},
	{"GET", "/kv/keys?prefix=k", ""}, {"PATCH", "/kv/k?ttl_ms=1000", ""}, {"OPTIONS", "/kv/k", ""},
	{"GET", "/kv/_repl/stream?id=x&offset=0", ""}, {"GET", "/kv/_repl/snapshot", ""},
	{"POST", "/kv/_repl/ack?id=x&offset=0", ""}, {"GET", "/kv/_repl/followers", ""},
}

func serve(t *testing.T, g Guard) http.Handler {
	t.Helper()
	st, err := kv.Open(kv.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	next := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.Write([]byte("next\n")) })
	return Mount(st, next, Options{MaxBody: 1 << 20, Guard: g})
}

func call(h http.Handler, rt route, auth string) *httptest.ResponseRecorder {
	r := httptest.NewRequest(rt.method, rt.path, strings.NewReader(rt.body))
	if rt.body != "" && rt.body[0] == '{' {
		r.Header.Set("Content-Type", "application/json")
	} else {
		r.Header.Set("Content-Type", "application/octet-stream")
	}
	if auth != "" {
		r.Header.Set("Authorization", auth)
	}
	w := httptest.NewRecorder()
	h.ServeHTTP(w, r)
	return w
}

func replStub() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(http.StatusTeapot) })
}

// TestAuthEveryRoute: with a token, every /kv/ route answers 401 without
// it or with a wrong one, and serves with it; other paths are not ours.
func TestAuthEveryRoute(t *testing.T) {
	h := serve(t, Guard{Token: "s3cret", Repl: replStub()})
	for _, rt := range routes {
		for _, auth := range []string{"", "Bearer wrong", "Basic s3cret", "s3cret"} {
			if w := call(h, rt, auth); w.Code != http.StatusUnauthorized || w.Header().Get("WWW-Authenticate") == "" {
				t.Errorf("%s %s with %q: %d", rt.method, rt.path, auth, w.Code)
			}
		}
		w := call(h, rt, "Bearer s3cret")
		if w.Code == http.StatusUnauthorized {
			t.Errorf("%s %s with the token: 401", rt.method, rt.path)
		}
		if strings.HasPrefix(rt.path, "/kv/_repl/") && w.Code != http.StatusTeapot {
			t.Errorf("%s %s did not reach the replication handler: %d", rt.method, rt.path, w.Code)
		}
	}
	if w := call(h, route{"GET", "/other", ""}, ""); w.Code != http.StatusOK {
		t.Errorf("a path outside /kv/ is the next handler's: %d", w.Code)
	}
}

// TestReadOnly: a replica answers 403 to PUT, DELETE, PATCH and mset only.
func TestReadOnly(t *testing.T) {
	ro := true
	h := serve(t, Guard{ReadOnly: func() bool { return ro }, Repl: replStub()})
	for _, rt := range routes {
		w := call(h, rt, "")
		write := rt.method == "PUT" || rt.method == "DELETE" || rt.method == "PATCH" || rt.path == "/kv/mset"
		if (w.Code == http.StatusForbidden) != write {
			t.Errorf("%s %s on a replica: %d %s", rt.method, rt.path, w.Code, w.Body)
		}
	}
	ro = false
	if w := call(h, routes[2], ""); w.Code/100 != 2 {
		t.Errorf("PUT once writable: %d", w.Code)
	}
}

// TestRateLimitHTTP: past its burst a client gets 429 with Retry-After;
// another client does not.
func TestRateLimitHTTP(t *testing.T) {
	// 1 request a second, burst 2: the test runs in far less than the
	// second that would refill a token.
	h := serve(t, Guard{Limiter: access.NewLimiter(1, 2)})
	get := func(remote string) *httptest.ResponseRecorder {
		r := httptest.NewRequest("GET", "/kv/k", nil)
		r.RemoteAddr = remote
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		return w
	}
	for i, remote := range []string{"10.0.0.1:1", "10.0.0.1:2"} {
		if w := get(remote); w.Code == http.StatusTooManyRequests {
			t.Fatalf("request %d within the burst: 429", i)
		}
	}
	if w := get("10.0.0.1:3"); w.Code != http.StatusTooManyRequests || w.Header().Get("Retry-After") == "" {
		t.Fatalf("3rd request: %d", w.Code)
	}
	if w := get("10.0.0.2:1"); w.Code == http.StatusTooManyRequests {
		t.Fatal("another client was limited")
	}
}

func TestMetricsHook(t *testing.T) {
	h := serve(t, Guard{Metrics: func() []byte { return []byte("wirebench_kv_repl_seq 7\n") }})
	r := httptest.NewRequest("GET", "/metrics", nil)
	w := httptest.NewRecorder()
	h.ServeHTTP(w, r)
	if !strings.Contains(w.Body.String(), "wirebench_kv_repl_seq 7\n") {
		t.Fatalf("/metrics lacks the replication lines:\n%s", w.Body)
	}
}
