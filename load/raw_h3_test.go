package load

import (
	"context"
	"encoding/pem"
	"errors"
	"net"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/wirebench/wirebench/internal/testkit"

	"github.com/quic-go/quic-go"
	"github.com/quic-go/quic-go/http3"

	"github.com/wirebench/wirebench/load/conn"
	"github.com/wirebench/wirebench/load/h3"
	"github.com/wirebench/wirebench/load/internal/loadtest"
	"github.com/wirebench/wirebench/results"
)

// h3Server is quic-go's HTTP/3 server on 127.0.0.1:0 with the TLS test
// server's certificate, counting requests and QUIC connections.
type h3Server struct {
	addr            string
	requests, conns atomic.Int64
}

func startH3Server(t testing.TB) (*h3Server, *tlsServer) {
	t.Helper()
	ts := startTLSServer(t, nil) // for its certificate
	udp, err := net.ListenUDP("udp", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		t.Fatal(err)
	}
	s := &h3Server{addr: udp.LocalAddr().String()}
	srv := &http3.Server{
		TLSConfig: http3.ConfigureTLSConfig(ts.TLS.Clone()),
		Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			s.requests.Add(1)
			if r.URL.Path == "/redirect" { // TestRedirectIsAResponse
				http.Redirect(w, r, "/", http.StatusFound)
				return
			}
			loadtest.OK(w, r)
		}),
		ConnContext: func(ctx context.Context, _ *quic.Conn) context.Context { s.conns.Add(1); return ctx },
	}
	done := make(chan struct{})
	go func() { srv.Serve(udp); close(done) }()
	t.Cleanup(func() { srv.Close(); udp.Close(); <-done })
	return s, ts
}

// TestH3 runs raw mode over HTTP/3, closed and open loop, with -k and
// --cacert: the client's count is the server's, --conns is the QUIC
// connection count, the handshakes are timed apart, and the UDP payload
// is counted beyond the bodies.
func TestH3(t *testing.T) {
	srv, ts := startH3Server(t)
	ca := testkit.WritePEM(t, t.TempDir(), "ca.pem", &pem.Block{Type: "CERTIFICATE", Bytes: ts.Certificate().Raw})
	for _, tc := range []struct {
		name  string
		ro    RawOptions
		o     results.Options
		conns int64
	}{
		{"-k closed loop", RawOptions{Options: conn.Options{Insecure: true, Connections: 2}}, results.Options{Concurrency: 4, Requests: 300}, 2},
		{"--cacert", RawOptions{Options: conn.Options{CAFile: ca, Connections: 1}}, results.Options{Concurrency: 3, Requests: 100}, 1},
		{"open loop", RawOptions{Options: conn.Options{Insecure: true, Connections: 3}}, results.Options{Concurrency: 6, Rate: 400, Requests: 200}, 3},
	} {
		t.Run(tc.name, func(t *testing.T) {
			req0, conn0 := srv.requests.Load(), srv.conns.Load()
			tc.ro.URL, tc.ro.Transport = "https://"+srv.addr+"/", conn.H3
			tc.o.Timeout = 10 * time.Second
			tc.ro.Timeout = tc.o.Timeout
			sc, err := NewRaw(tc.ro)
			if err != nil {
				t.Fatal(err)
			}
			res, err := Run(context.Background(), Options{Options: tc.o}, sc)
			if err != nil {
				t.Fatal(err)
			}
			if res.Failed != 0 || res.Requests == 0 || (tc.o.Requests > 0 && res.Requests != tc.o.Requests) {
				t.Fatalf("%d requests, failures %v", res.Requests, res.Failures)
			}
			served := srv.requests.Load() - req0
			if served < res.Requests || served > res.Requests+res.Interrupted {
				t.Errorf("server answered %d, client counted %d (+%d interrupted)", served, res.Requests, res.Interrupted)
			}
			if got := srv.conns.Load() - conn0; got != tc.conns {
				t.Errorf("%d QUIC connections, want %d", got, tc.conns)
			}
			if hs := sc.H3Handshakes(); int64(len(hs)) != tc.conns {
				t.Errorf("handshakes %v, want %d", hs, tc.conns)
			}
			// The result records the set-up itself: what was dialled,
			// over which transport, and the handshakes apart.
			if c := res.Conn; c == nil || c.URL != tc.ro.URL || c.Transport != conn.H3 || int64(len(c.Handshakes)) != tc.conns || c.ZeroRTT != nil {
				t.Errorf("result's conn %+v, want %s over h3 with %d handshakes", c, tc.ro.URL, tc.conns)
			}
			if res.Bytes.WireIn <= res.Bytes.BodyIn || res.Bytes.WireOut <= 0 {
				t.Errorf("bytes %+v: UDP payload not counted", res.Bytes)
			}
			// Bytes by layer: they add up to the UDP payload exactly, and
			// the body layer is the bodies the engine counted.
			l := res.Layers
			if l == nil || l.In.Total() != res.Bytes.WireIn || l.Out.Total() != res.Bytes.WireOut ||
				l.In.Other != 0 || l.Out.Other != 0 || l.In.Message != res.Bytes.BodyIn || l.Out.Message != res.Bytes.BodyOut ||
				l.In.QPACK == 0 || l.Out.QPACK == 0 || l.In.QUIC == 0 || l.In.H3Frames == 0 {
				t.Errorf("layers %+v, bytes %+v, warnings %q", l, res.Bytes, res.Warnings)
			}
		})
	}
}

// An unverified certificate completes no handshake: the run fails with
// the reason before its first request; a plain-text URL is refused
// before the run.
func TestH3Refusals(t *testing.T) {
	srv, _ := startH3Server(t)
	sc, err := NewRaw(RawOptions{Options: conn.Options{URL: "https://" + srv.addr + "/", Transport: conn.H3, Timeout: 5 * time.Second}})
	if err != nil {
		t.Fatal(err)
	}
	_, err = Run(context.Background(), Options{Options: results.Options{Concurrency: 2, Requests: 10, Timeout: 5 * time.Second}}, sc)
	if !errors.Is(err, h3.ErrNoHandshake) || !strings.Contains(err.Error(), "certificate") {
		t.Errorf("err %v, want no QUIC handshake completed: a certificate error", err)
	}
	if _, err := NewRaw(RawOptions{Options: conn.Options{URL: "http://" + srv.addr + "/", Transport: conn.H3}}); !errors.Is(err, ErrOptions) || !strings.Contains(err.Error(), "https://") {
		t.Errorf("h3 over http://: %v", err)
	}
}
