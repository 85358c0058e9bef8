package load

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/wirebench/wirebench/internal/testkit"
	"github.com/wirebench/wirebench/load/internal/loadtest"
	"github.com/wirebench/wirebench/results"
)

func TestAltSvcH3(t *testing.T) {
	for _, tc := range []struct {
		v    string
		host string
		port int
		ok   bool
		err  bool
	}{
		{`h3=":8443"; ma=86400`, "", 8443, true, false},
		{`h3-29=":1", h3="alt.example:443"; ma=60; persist=1`, "alt.example", 443, true, false},
		{`h2=":443", h3="[::1]:9000"`, "::1", 9000, true, false},
		{`h2=":443"`, "", 0, false, false},
		{``, "", 0, false, false},
		{`clear`, "", 0, false, false},
		{`h3=":0"`, "", 0, false, true},
		{`h3=":70000"`, "", 0, false, true},
		{`h3=:443`, "", 0, false, true},
		{`h3="443"`, "", 0, false, true},
		{`h3`, "", 0, false, true},
		{`h3=":" ` + strings.Repeat("x", MaxAltSvc), "", 0, false, true},
	} {
		host, port, ok, err := AltSvcH3(tc.v)
		if host != tc.host || port != tc.port || ok != tc.ok || (err != nil) != tc.err || err != nil && !errors.Is(err, ErrAltSvc) {
			t.Errorf("%.40q: %q %d %v %v", tc.v, host, port, ok, err)
		}
	}
}

// FuzzAltSvcH3: no value panics, an offer is a port in range, and an
// offer found is found again in the value written back.
func FuzzAltSvcH3(f *testing.F) {
	for _, s := range []string{`h3=":443"; ma=86400`, `h2=":1", h3="h:2"`, `clear`, `h3="a,b:1"`, `"`, `h3=""`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, v string) {
		host, port, ok, err := AltSvcH3(v)
		if err != nil && ok {
			t.Fatalf("%q: offer and error %v", v, err)
		}
		if !ok {
			return
		}
		if port < 1 || port > 65535 {
			t.Fatalf("%q: port %d", v, port)
		}
		h2, p2, ok2, err2 := AltSvcH3(`h3="` + net.JoinHostPort(host, strconv.Itoa(port)) + `"`)
		if !ok2 || err2 != nil || h2 != host || p2 != port {
			t.Fatalf("%q: %q %d, written back: %q %d %v %v", v, host, port, h2, p2, ok2, err2)
		}
	})
}

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
		{"h3 advertised", fmt.Sprintf(`h3=":%s"; ma=86400`, h3port), TransportH3, "Alt-Svc"},
		{"no Alt-Svc", "", TransportH2, "no Alt-Svc"},
		{"h2 only", `h2=":443"`, TransportH2, "offers no h3"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			base, tcp := altSvcServer(t, ts, tc.altSvc)
			sc, err := NewRaw(RawOptions{URL: base + "/users/1", Transport: TransportAuto, Insecure: true, Connections: 2, Timeout: o.Timeout})
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
			if tc.want == TransportH3 && (onH3 != 200 || onTCP != 0) || tc.want != TransportH3 && (onH3 != 0 || onTCP != 200) {
				t.Errorf("served over h3 %d, over TCP %d", onH3, onTCP)
			}
		})
	}
	sc, err := NewRaw(RawOptions{URL: "http://127.0.0.1:1/", Transport: TransportAuto})
	if err != nil || sc.Options().Transport != TransportHTTP1 || sc.Options().Auto == "" {
		t.Errorf("auto over http://: %v %+v", err, sc)
	}
	if _, err := NewRaw(RawOptions{URL: "https://" + testkit.RefusedAddr(t) + "/", Transport: TransportAuto, Timeout: 5 * time.Second}); err == nil || !strings.Contains(err.Error(), "first request") {
		t.Errorf("auto against no server: %v", err)
	}
	// The reference scenarios: HTTP/3 at the advertised address, or an error.
	base, _ := altSvcServer(t, ts, fmt.Sprintf(`h3=":%s"`, h3port))
	if addr, note, err := FollowAltSvc(base, true, "", 5*time.Second); err != nil || addr != h3srv.addr || note == "" {
		t.Errorf("FollowAltSvc: %q %q %v, want %s", addr, note, err, h3srv.addr)
	}
	base, _ = altSvcServer(t, ts, "")
	if _, _, err := FollowAltSvc(base, true, "", 5*time.Second); !errors.Is(err, ErrOptions) {
		t.Errorf("FollowAltSvc without h3: %v", err)
	}
}
