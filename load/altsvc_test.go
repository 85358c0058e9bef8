package load

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/wirebench/wirebench/internal/testkit"
	"github.com/wirebench/wirebench/load/conn"
	"github.com/wirebench/wirebench/load/internal/loadtest"
	"github.com/wirebench/wirebench/results"
)

// altSvcServer is a TLS server on TCP (h2 and HTTP/1.1) with the h3 test
// server's certificate, answering with this Alt-Svc and counting.
func altSvcServer(t *testing.T, ts *tlsServer, altSvc string) (string, *atomic.Int64) {
	var n atomic.Int64
	s := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if altSvc != "" {
			w.Header().Set("Alt-Svc", altSvc)
		}
		n.Add(1)
		loadtest.OK(w, r)
	}))
	s.EnableHTTP2 = true
	s.TLS = ts.TLS.Clone()
	s.StartTLS()
	t.Cleanup(s.Close)
	return s.URL, &n
}

// TestTransportAuto: --transport auto makes one request over TLS on TCP,
// then runs over HTTP/3 on the UDP port its Alt-Svc advertises (every
// request of the run counted by the h3 server, none more by the TCP one),
// and stays on h2 without an h3 offer; Options().Auto says which and why.
func TestTransportAuto(t *testing.T) {
	h3srv, ts := startH3Server(t)
	_, h3port, _ := net.SplitHostPort(h3srv.addr)
	o := Options{Options: results.Options{Concurrency: 4, Requests: 200, Timeout: 10 * time.Second}}
	for _, tc := range []struct {
		name, altSvc, want, note string
	}{
		{"h3 advertised", fmt.Sprintf(`h3=":%s"; ma=86400`, h3port), conn.H3, "Alt-Svc"},
		{"no Alt-Svc", "", conn.H2, "no Alt-Svc"},
		{"h2 only", `h2=":443"`, conn.H2, "offers no h3"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			base, tcp := altSvcServer(t, ts, tc.altSvc)
			sc, err := NewRaw(RawOptions{Options: conn.Options{URL: base + "/users/1", Transport: conn.Auto, Insecure: true, Connections: 2, Timeout: o.Timeout}})
			if err != nil {
				t.Fatal(err)
			}
			got := sc.Options()
			if got.Transport != tc.want || !strings.Contains(got.Auto, tc.note) || !strings.Contains(got.Auto, "GET /users/1") {
				t.Fatalf("transport %s, auto %q; want %s, %q", got.Transport, got.Auto, tc.want, tc.note)
			}
			if tcp.Load() != 1 {
				t.Fatalf("%d probe requests over TCP, want 1", tcp.Load())
			}
			h3before := h3srv.requests.Load()
			res, err := Run(context.Background(), o, sc)
			if err != nil {
				t.Fatal(err)
			}
			if res.Failed != 0 || res.Requests != 200 {
				t.Fatalf("%d requests, failures %v", res.Requests, res.Failures)
			}
			onH3, onTCP := h3srv.requests.Load()-h3before, tcp.Load()-1
			if tc.want == conn.H3 && (onH3 != 200 || onTCP != 0) || tc.want != conn.H3 && (onH3 != 0 || onTCP != 200) {
				t.Errorf("served over h3 %d, over TCP %d", onH3, onTCP)
			}
		})
	}
	sc, err := NewRaw(RawOptions{Options: conn.Options{URL: "http://127.0.0.1:1/", Transport: conn.Auto}})
	if err != nil || sc.Options().Transport != conn.HTTP1 || sc.Options().Auto == "" {
		t.Errorf("auto over http://: %v %+v", err, sc)
	}
	if _, err := NewRaw(RawOptions{Options: conn.Options{URL: "https://" + testkit.RefusedAddr(t) + "/", Transport: conn.Auto, Timeout: 5 * time.Second}}); err == nil || !strings.Contains(err.Error(), "first request") {
		t.Errorf("auto against no server: %v", err)
	}
	// Every client follows Alt-Svc by the same rule (conn.New): HTTP/3 at
	// the advertised address, and a client of h3 alone refuses an origin
	// that advertises none.
	base, _ := altSvcServer(t, ts, fmt.Sprintf(`h3=":%s"`, h3port))
	h3only := conn.Speaks{Transports: []string{conn.H3}}
	co := conn.Options{URL: base, Transport: conn.Auto, Insecure: true, Timeout: 5 * time.Second}
	if c, err := conn.New(co, h3only); err != nil || c.Addr != h3srv.addr || c.H3 == nil || c.Auto == "" {
		t.Errorf("auto: %v %+v, want h3 at %s", err, c, h3srv.addr)
	} else {
		c.Close()
	}
	co.URL, _ = altSvcServer(t, ts, "")
	if _, err := conn.New(co, h3only); !errors.Is(err, ErrOptions) || !strings.Contains(err.Error(), `transport "h2" (want h3)`) {
		t.Errorf("auto without h3 to a client of h3: %v", err)
	}
}
