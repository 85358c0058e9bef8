package load

import (
	"net"
	"net/http"
	"net/http/httptest"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"github.com/quic-go/quic-go/http3"

	"github.com/wirebench/wirebench/load/conn"
	"github.com/wirebench/wirebench/results"
)

// TestRawStdHeaderEveryRequest: raw mode over net/http's clients (std
// HTTP/1.1, h2c, h3) builds its request once per VU and sends it again:
// every request still carries the -H headers and one User-Agent,
// wirebench (not Go's nor quic-go's default beside it), the same
// request after request; a User-Agent or Host of the user's replaces the
// default (an empty User-Agent sends none), as curl's -H does. The
// server answers 400 to any request that does not, so a failure shows as
// a failed request.
func TestRawStdHeaderEveryRequest(t *testing.T) {
	var served, bad atomic.Int64
	var want atomic.Pointer[headerCase]
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		served.Add(1)
		hc := want.Load()
		ua := r.Header.Values("User-Agent")
		if !slices.Equal(ua, hc.ua) || (hc.host != "" && r.Host != hc.host) || r.Header.Get("X-Run") != "a" ||
			len(r.Header.Values("X-Two")) != 2 || r.Method != "GET" || r.URL.RequestURI() != "/users/1?x=y" {
			bad.Add(1)
			w.WriteHeader(http.StatusBadRequest)
			return
		}
		w.Write([]byte("ok"))
	})
	plain := httptest.NewUnstartedServer(h)
	var protos http.Protocols
	protos.SetHTTP1(true)
	protos.SetUnencryptedHTTP2(true)
	plain.Config.Protocols = &protos
	plain.Start()
	t.Cleanup(plain.Close)
	ts := startTLSServer(t, nil) // for its certificate
	udp, err := net.ListenUDP("udp", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		t.Fatal(err)
	}
	h3srv := &http3.Server{TLSConfig: http3.ConfigureTLSConfig(ts.TLS.Clone()), Handler: h}
	done := make(chan struct{})
	go func() { h3srv.Serve(udp); close(done) }()
	t.Cleanup(func() { h3srv.Close(); udp.Close(); <-done })

	header := []string{"x-run: a", "X-Two: 1", "x-two: 2"}
	cases := []headerCase{
		{"defaults", header, []string{"wirebench"}, ""},
		{"the user's User-Agent and Host", append(slices.Clip(header), "user-agent: k6/1.0", "Host: api.example"), []string{"k6/1.0"}, "api.example"},
		{"an empty User-Agent", append(slices.Clip(header), "User-Agent:"), nil, ""},
	}
	for _, tc := range []struct {
		name string
		co   conn.Options
	}{
		{"std", conn.Options{URL: plain.URL + "/users/1?x=y", Client: conn.ClientStd}},
		{"h2c", conn.Options{URL: plain.URL + "/users/1?x=y", Transport: conn.H2C}},
		{"h3", conn.Options{URL: "https://" + udp.LocalAddr().String() + "/users/1?x=y", Transport: conn.H3, Insecure: true}},
	} {
		for _, hc := range cases {
			t.Run(tc.name+"/"+hc.name, func(t *testing.T) {
				want.Store(&hc)
				served0, bad0 := served.Load(), bad.Load()
				for _, expect := range []string{"", "ok"} { // counted, and kept for the body check
					res := runRaw(t, Options{Options: results.Options{Concurrency: 3, Requests: 60, Timeout: 10 * time.Second}},
						RawOptions{Options: tc.co, Header: hc.header, ExpectBodyContains: expect})
					if res.Requests != 60 || res.Failed != 0 {
						t.Errorf("body check %q: %d requests, failures %v", expect, res.Requests, res.Failures)
					}
				}
				if n, b := served.Load()-served0, bad.Load()-bad0; n != 120 || b != 0 {
					t.Errorf("the server saw %d requests, %d of them wrong; want 120, 0", n, b)
				}
			})
		}
	}
}

// headerCase is a request's -H lines and what the server must see of
// them: its User-Agent values (nil: none) and, if set, its Host.
type headerCase struct {
	name   string
	header []string
	ua     []string
	host   string
}
