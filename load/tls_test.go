package load

import (
	"crypto/tls"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"io"
	"log"
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

// tlsServer is an HTTPS test server (self-signed, HTTP/1.1 and h2 by
// ALPN) counting requests per HTTP major version.
type tlsServer struct {
	*httptest.Server
	h1, h2 atomic.Int64
}

func startTLSServer(t testing.TB, cfg *tls.Config) *tlsServer {
	t.Helper()
	s := &tlsServer{}
	s.Server = httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.ProtoMajor == 2 {
			s.h2.Add(1)
		} else {
			s.h1.Add(1)
		}
		loadtest.OK(w, r)
	}))
	s.EnableHTTP2 = true
	s.TLS = cfg
	s.Config.ErrorLog = log.New(io.Discard, "", 0) // refused handshakes are the point of some tests
	s.StartTLS()
	t.Cleanup(s.Close)
	return s
}

func TestHTTPS(t *testing.T) {
	t.Parallel()
	srv := startTLSServer(t, nil)
	dir := t.TempDir()
	ca := testkit.WritePEM(t, dir, "ca.pem", &pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw})
	const n = 200
	tests := []struct {
		name   string
		ro     RawOptions
		loop   bool
		proto  int    // HTTP major version the server must see
		reason string // every request fails with this, if set
	}{
		{"lean -k (event loop falls back to goroutines)", RawOptions{Options: conn.Options{Insecure: true, Transport: conn.HTTP1}}, true, 1, ""},
		{"lean --cacert", RawOptions{Options: conn.Options{CAFile: ca, Transport: conn.HTTP1}}, false, 1, ""},
		{"std -k", RawOptions{Options: conn.Options{Insecure: true, Client: conn.ClientStd, Transport: conn.HTTP1}}, false, 1, ""},
		{"auto picks h2 by ALPN", RawOptions{Options: conn.Options{Insecure: true}}, false, 2, ""},
		{"h2", RawOptions{Options: conn.Options{Insecure: true, Transport: conn.H2, Connections: 2}}, false, 2, ""},
		{"auto with --no-keepalive is HTTP/1.1", RawOptions{Options: conn.Options{Insecure: true, NoKeepAlive: true}}, false, 1, ""},
		{"unverified certificate", RawOptions{Options: conn.Options{Transport: conn.HTTP1}}, false, 1, "tls: failed to verify certificate"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			before1, before2 := srv.h1.Load(), srv.h2.Load()
			tc.ro.URL = srv.URL + "/"
			res := runRaw(t, Options{Options: results.Options{Concurrency: 4, Requests: n, EventLoop: tc.loop, Timeout: 5 * time.Second}}, tc.ro)
			if tc.reason != "" {
				for r := range res.Failures {
					if !strings.Contains(r, tc.reason) {
						t.Errorf("failure %q, want %q", r, tc.reason)
					}
				}
				// Every request fails; the run may stop before n of them
				// (a handshake no retry passes: failures.go).
				if res.Failed != res.Requests || (res.Failed != n && res.Stop == nil) {
					t.Errorf("%d of %d failed, %d sent, stop %+v", res.Failed, n, res.Requests, res.Stop)
				}
				return
			}
			if res.Failed != 0 || res.Requests != n {
				t.Fatalf("%d requests, failures %v", res.Requests, res.Failures)
			}
			served := map[int]int64{1: srv.h1.Load() - before1, 2: srv.h2.Load() - before2}
			if served[tc.proto] != n {
				t.Errorf("server saw %v requests by HTTP version, want %d over HTTP/%d", served, n, tc.proto)
			}
			// Bytes are counted on the socket, under TLS: the handshake and
			// each record's header and tag are framing.
			if res.Bytes.WireIn < res.Bytes.BodyIn+n*21 || res.Bytes.WireOut < n*21 {
				t.Errorf("wire bytes %+v: TLS framing not counted", res.Bytes)
			}
		})
	}
}

// TestNoKeepAliveIsHTTP1: a connection per request and net/http's client
// are HTTP/1.1's; asked over HTTP/2 they are refused, not ignored.
func TestNoKeepAliveIsHTTP1(t *testing.T) {
	for _, o := range []RawOptions{
		{Options: conn.Options{URL: "http://127.0.0.1:1/", Transport: conn.H2C, NoKeepAlive: true}},
		{Options: conn.Options{URL: "https://127.0.0.1:1/", Transport: conn.H2, NoKeepAlive: true}},
		{Options: conn.Options{URL: "http://127.0.0.1:1/", Transport: conn.H2C, Client: conn.ClientStd}},
	} {
		if _, err := NewRaw(o); !errors.Is(err, ErrOptions) || !strings.Contains(err.Error(), "--") {
			t.Errorf("%s over %s: %v", o.URL, o.Transport, err)
		}
	}
}

// TestHTTPSClientCert: a server requiring a client certificate accepts
// the one given with CertFile and KeyFile, and refuses a client without.
func TestHTTPSClientCert(t *testing.T) {
	t.Parallel()
	der, kd := testkit.ClientCert(t)
	cert, _ := x509.ParseCertificate(der)
	pool := x509.NewCertPool()
	pool.AddCert(cert)
	srv := startTLSServer(t, &tls.Config{ClientAuth: tls.RequireAndVerifyClientCert, ClientCAs: pool})
	dir := t.TempDir()
	certFile := testkit.WritePEM(t, dir, "cert.pem", &pem.Block{Type: "CERTIFICATE", Bytes: der})
	keyFile := testkit.WritePEM(t, dir, "key.pem", &pem.Block{Type: "EC PRIVATE KEY", Bytes: kd})
	for _, tc := range []struct {
		name     string
		ro       RawOptions
		wantFail bool
	}{
		{"with certificate", RawOptions{Options: conn.Options{Insecure: true, CertFile: certFile, KeyFile: keyFile, Transport: conn.HTTP1}}, false},
		{"with certificate, std", RawOptions{Options: conn.Options{Insecure: true, CertFile: certFile, KeyFile: keyFile, Client: conn.ClientStd}}, false},
		{"with certificate, h2", RawOptions{Options: conn.Options{Insecure: true, CertFile: certFile, KeyFile: keyFile, Transport: conn.H2}}, false},
		{"without", RawOptions{Options: conn.Options{Insecure: true, Transport: conn.HTTP1}}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tc.ro.URL = srv.URL + "/"
			res := runRaw(t, Options{Options: results.Options{Concurrency: 2, Requests: 20, Timeout: 5 * time.Second}}, tc.ro)
			if (res.Failed == 20) != tc.wantFail || (!tc.wantFail && res.Failed != 0) {
				t.Errorf("%d of 20 failed %v", res.Failed, res.Failures)
			}
		})
	}
}
