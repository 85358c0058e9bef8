package servercpu

import (
	"io"
	"net"
	"net/http"
	"strings"
	"testing"

	"github.com/valyala/fasthttp"

	"github.com/wirebench/wirebench/store"
)

// TestBareHandlersAgree: the two yardsticks answer alike — the same JSON
// for a user, 404 for a missing or malformed id, another path or a method
// other than GET — so that their costs compare the same work.
func TestBareHandlersAgree(t *testing.T) {
	st := store.NewMemory(store.Options{})
	if err := st.Seed(100, 0); err != nil {
		t.Fatal(err)
	}
	serve := func(start func(net.Listener)) string {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { ln.Close() })
		go start(ln)
		return "http://" + ln.Addr().String()
	}
	std := serve(func(ln net.Listener) { _ = http.Serve(ln, BareHandler(st.ListUsers())) })
	fast := serve(func(ln net.Listener) { _ = fasthttp.Serve(ln, BareFastHandler(st.ListUsers())) })
	do := func(method, url string) (int, string, string) {
		req, err := http.NewRequest(method, url, nil)
		if err != nil {
			t.Fatal(err)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, err := io.ReadAll(resp.Body)
		if err != nil {
			t.Fatal(err)
		}
		return resp.StatusCode, resp.Header.Get("Content-Type"), string(b)
	}
	for _, c := range []struct {
		method, path string
		status       int
	}{
		{"GET", "/users/1", 200}, {"GET", "/users/100", 200},
		{"GET", "/users/101", 404}, {"GET", "/users/x", 404}, {"GET", "/users/", 404},
		{"GET", "/todos/1", 404}, {"DELETE", "/users/1", 0},
	} {
		ss, sct, sb := do(c.method, std+c.path)
		fs, fct, fb := do(c.method, fast+c.path)
		if c.status == 0 {
			// A wrong method: net/http's mux says 405, the fasthttp
			// handler 404; neither serves the user.
			if ss < 400 || fs < 400 {
				t.Errorf("%s %s: %d and %d, want errors", c.method, c.path, ss, fs)
			}
			continue
		}
		if ss != c.status || fs != c.status {
			t.Errorf("%s %s: net/http %d, fasthttp %d, want %d", c.method, c.path, ss, fs, c.status)
		}
		if c.status == 200 && (sb != fb || sct != fct || !strings.Contains(sb, `"id":`)) {
			t.Errorf("%s: net/http %s %q, fasthttp %s %q", c.path, sct, sb, fct, fb)
		}
	}
}
