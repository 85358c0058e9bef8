package load

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	"github.com/wirebench/wirebench/load/conn"
	"github.com/wirebench/wirebench/results"
)

// A redirect is a response, counted with its status, on every transport:
// load's HTTP/1.1 client never followed one, while net/http's clients
// (h2c, h2, h3, --client std) followed each to its target, so the same
// URL was one exchange a request over HTTP/1.1 and two over h2c and h3.
func TestRedirectIsAResponse(t *testing.T) {
	const n = 20
	var h1Hits atomic.Int64
	redirect := func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/redirect" {
			http.Redirect(w, r, "/", http.StatusFound)
			return
		}
		w.Write([]byte("target"))
	}
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { h1Hits.Add(1); redirect(w, r) }))
	defer ts.Close()
	h2 := startH2Server(t, 100, func(_ int64, w http.ResponseWriter, r *http.Request) { redirect(w, r) })
	h3, _ := startH3Server(t)
	for _, tc := range []struct {
		name string
		ro   conn.Options
		hits func() int64
	}{
		{"http1", conn.Options{URL: ts.URL + "/redirect"}, h1Hits.Load},
		{"http1 --client std", conn.Options{URL: ts.URL + "/redirect", Client: conn.ClientStd}, h1Hits.Load},
		{"h2c", conn.Options{URL: h2.URL + "redirect", Transport: conn.H2C}, h2.requests.Load},
		{"h3", conn.Options{URL: "https://" + h3.addr + "/redirect", Transport: conn.H3, Insecure: true, NoLayers: true}, h3.requests.Load},
	} {
		t.Run(tc.name, func(t *testing.T) {
			before := tc.hits()
			res := runRaw(t, Options{Options: results.Options{Concurrency: 2, Requests: n, Timeout: 10 * time.Second}}, RawOptions{Options: tc.ro})
			hits := tc.hits() - before
			if res.Requests != n || res.Status["302"] != n || hits != n {
				t.Errorf("%d requests, statuses %v, failures %v; the server answered %d requests, want %d 302s, each one exchange",
					res.Requests, res.Status, res.Failures, hits, n)
			}
			if got := fmt.Sprint(res.Failures); res.Failed != n {
				t.Errorf("%d failed (%s), want all %d: a 302 is not the 2xx raw mode expects", res.Failed, got, n)
			}
		})
	}
}
