package conn

import (
	"crypto/tls"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/wirebench/wirebench/internal/testkit"
)

var every = Speaks{Transports: []string{HTTP1, H2C, H2, H3, GRPC}}

// TestRule: scheme and transport decide, in one place, the transport in
// effect, the TLS configuration and which pool the VUs share; the
// combinations that cannot work are refused with one line each. No
// connection is made: pools dial at a VU's first request.
func TestRule(t *testing.T) {
	for _, tc := range []struct {
		o    Options
		want string // transport in effect, or the error's text
		pool string // "", "h2", "h3", "grpc"
		tls  bool
	}{
		{Options{URL: "http://127.0.0.1:1/"}, HTTP1, "", false},
		{Options{URL: "http://127.0.0.1:1/", Transport: HTTP1}, HTTP1, "", false},
		{Options{URL: "http://127.0.0.1:1/", Transport: H2C}, H2C, "h2", false},
		{Options{URL: "https://127.0.0.1:1/", Transport: HTTP1}, HTTP1, "", true},
		{Options{URL: "https://127.0.0.1:1/", NoKeepAlive: true}, HTTP1, "", true},
		{Options{URL: "https://127.0.0.1:1/", Client: ClientStd}, HTTP1, "", true},
		{Options{URL: "https://127.0.0.1:1/", Transport: H2}, H2, "h2", true},
		{Options{URL: "https://127.0.0.1:1/", Transport: H3, ZeroRTT: true}, H3, "h3", true},
		{Options{URL: "https://127.0.0.1:1/", Transport: H3, NoLayers: true}, H3, "h3", true},
		{Options{URL: "https://127.0.0.1:1/", Transport: H3, CheckLayers: true}, H3, "h3", true},
		{Options{URL: "127.0.0.1:1", Transport: GRPC}, GRPC, "grpc", false},
		{Options{URL: "http://127.0.0.1:1", Transport: GRPC, Client: ClientStd}, GRPC, "grpc", false},
		{Options{URL: "http://127.0.0.1:1/", Transport: Auto}, HTTP1, "", false},
		{Options{URL: "http://127.0.0.1:1/", Transport: H2}, "--transport h2 is HTTP/2 over TLS: use an https:// URL, or h2c", "", false},
		{Options{URL: "http://127.0.0.1:1/", Transport: H3}, "--transport h3 is HTTP/3 over QUIC, always encrypted: use an https:// URL", "", false},
		{Options{URL: "https://127.0.0.1:1/", Transport: H2C}, "h2c is HTTP/2 without TLS", "", false},
		{Options{URL: "http://127.0.0.1:1/", Transport: H2C, NoKeepAlive: true}, "--no-keepalive (a connection per request) is HTTP/1.1's", "", false},
		{Options{URL: "https://127.0.0.1:1/", Transport: H3, Client: ClientStd}, "--client std is net/http's", "", false},
		{Options{URL: "https://127.0.0.1:1/", Transport: H2, ZeroRTT: true}, "--0rtt is HTTP/3's (--transport h3), not h2", "", false},
		{Options{URL: "https://127.0.0.1:1/", Transport: HTTP1, NoLayers: true}, "--no-layers is HTTP/3's (--transport h3), not http1", "", false},
		{Options{URL: "https://127.0.0.1:1/", Transport: H2, CheckLayers: true}, "--layers-checked is HTTP/3's split", "", false},
		{Options{URL: "https://127.0.0.1:1/", Transport: H3, NoLayers: true, CheckLayers: true}, "--layers-checked is HTTP/3's split", "", false},
		{Options{URL: "http://127.0.0.1:1/", Transport: "spdy"}, `transport "spdy" (want http1, h2c, h2, h3 or grpc)`, "", false},
		{Options{URL: "http://127.0.0.1:1/", Client: "curl"}, `client "curl" (want lean or std)`, "", false},
		{Options{URL: "ftp://127.0.0.1:1/"}, "want http(s)://host[:port]/path", "", false},
		{Options{URL: "127.0.0.1", Transport: GRPC}, "want host:port for grpc", "", false},
	} {
		c, err := New(tc.o, every)
		name := tc.o.URL + " " + tc.o.Transport
		if !slices.Contains(every.Transports, tc.want) {
			if !errors.Is(err, ErrOptions) || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("%s: %v, want an ErrOptions with %q", name, err, tc.want)
			}
			continue
		}
		if err != nil {
			t.Errorf("%s: %v", name, err)
			continue
		}
		pool := ""
		switch {
		case c.H2 != nil:
			pool = "h2"
		case c.H3 != nil:
			pool = "h3"
		case c.GRPC != nil:
			pool = "grpc"
		}
		if got := c.Options().Transport; got != tc.want || pool != tc.pool || (c.TLS != nil) != tc.tls {
			t.Errorf("%s: transport %s, pool %q, TLS %v; want %s, %q, %v", name, got, pool, c.TLS != nil, tc.want, tc.pool, tc.tls)
		}
		if c.TLS != nil && (c.TLS.ServerName != "127.0.0.1" || len(c.TLS.NextProtos) != 0 || !slices.Equal(c.H1TLS().NextProtos, []string{"http/1.1"})) {
			t.Errorf("%s: TLS server name %q, ALPN %v, HTTP/1.1's %v", name, c.TLS.ServerName, c.TLS.NextProtos, c.H1TLS().NextProtos)
		}
		if c.Options().Client == "" {
			t.Errorf("%s: no client in effect", name)
		}
		c.Close()
	}
	// A client refuses what it does not speak, by the same rule.
	_, err := New(Options{URL: "https://127.0.0.1:1/", Transport: H2}, Speaks{Transports: []string{HTTP1, H3}})
	if !errors.Is(err, ErrOptions) || !strings.Contains(err.Error(), `transport "h2" (want http1 or h3)`) {
		t.Errorf("h2 to a client of http1 and h3: %v", err)
	}
}

// tlsServer is an HTTPS test server (h2 and HTTP/1.1 by ALPN, or
// HTTP/1.1 only) with cfg's client-certificate policy.
func tlsServer(t *testing.T, h2 bool, cfg *tls.Config) *httptest.Server {
	s := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.WriteString(w, r.Proto)
	}))
	s.EnableHTTP2 = h2
	s.TLS = cfg
	s.Config.ErrorLog = log.New(io.Discard, "", 0) // refused handshakes are the point
	s.StartTLS()
	t.Cleanup(s.Close)
	return s
}

// get sends one GET over c's pool or, over HTTP/1.1, a net/http client
// with c's HTTP/1.1 TLS configuration; it returns the protocol served.
func get(t *testing.T, c *Conns) (string, error) {
	t.Helper()
	client := &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{TLSClientConfig: c.H1TLS()}}
	switch {
	case c.H2 != nil:
		client = c.H2.Client(0)
	case c.H3 != nil:
		client = c.H3.Client(0)
	}
	defer client.CloseIdleConnections()
	resp, err := client.Get(c.Target.String())
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return string(b), err
}

// TestProbeALPN: https:// with no transport asks the server by ALPN and
// takes h2 where it is offered, HTTP/1.1 otherwise, and the pool matches.
func TestProbeALPN(t *testing.T) {
	t.Parallel()
	for _, h2 := range []bool{true, false} {
		srv := tlsServer(t, h2, nil)
		c, err := New(Options{URL: srv.URL + "/", Insecure: true, Timeout: 5 * time.Second}, every)
		if err != nil {
			t.Fatal(err)
		}
		want, proto := HTTP1, "HTTP/1.1"
		if h2 {
			want, proto = H2, "HTTP/2.0"
		}
		if c.Options().Transport != want || (c.H2 != nil) != h2 {
			t.Errorf("server with h2 %v: transport %s, h2 pool %v", h2, c.Options().Transport, c.H2 != nil)
		}
		if got, err := get(t, c); got != proto || err != nil {
			t.Errorf("server with h2 %v: served %q, %v", h2, got, err)
		}
	}
}

// TestClientCert: a server requiring a client certificate accepts the
// one of CertFile and KeyFile over HTTP/1.1 and h2, and refuses a client
// without one; the server's own certificate is checked against CAFile.
func TestClientCert(t *testing.T) {
	t.Parallel()
	der, keyDER := testkit.ClientCert(t)
	cert, _ := x509.ParseCertificate(der)
	pool := x509.NewCertPool()
	pool.AddCert(cert)
	srv := tlsServer(t, true, &tls.Config{ClientAuth: tls.RequireAndVerifyClientCert, ClientCAs: pool})
	dir := t.TempDir()
	certFile := testkit.WritePEM(t, dir, "cert.pem", &pem.Block{Type: "CERTIFICATE", Bytes: der})
	keyFile := testkit.WritePEM(t, dir, "key.pem", &pem.Block{Type: "EC PRIVATE KEY", Bytes: keyDER})
	ca := testkit.WritePEM(t, dir, "ca.pem", &pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw})
	for _, tc := range []struct {
		o       Options
		want    string
		refused bool
	}{
		{Options{CAFile: ca, CertFile: certFile, KeyFile: keyFile, Transport: HTTP1}, "HTTP/1.1", false},
		{Options{CAFile: ca, CertFile: certFile, KeyFile: keyFile, Transport: H2}, "HTTP/2.0", false},
		{Options{CAFile: ca, Transport: HTTP1}, "", true},
		{Options{CAFile: ca, Transport: H2}, "", true},
		{Options{CertFile: certFile, KeyFile: keyFile, Transport: HTTP1}, "", true}, // the server's certificate is not trusted
	} {
		tc.o.URL, tc.o.Timeout = srv.URL+"/", 5*time.Second
		c, err := New(tc.o, every)
		if err != nil {
			t.Fatal(err)
		}
		got, err := get(t, c)
		if tc.refused != (err != nil) || got != tc.want {
			t.Errorf("%+v: served %q, %v", tc.o, got, err)
		}
	}
	_, err := New(Options{URL: srv.URL, CertFile: certFile, KeyFile: certFile}, every)
	if !errors.Is(err, ErrOptions) || !strings.Contains(err.Error(), "client certificate: ") {
		t.Errorf("a certificate as its own key: %v", err)
	}
}

// TestBadCAFile: a CA file that cannot be read, or holds no certificate,
// is refused before any connection with the file's name and why.
func TestBadCAFile(t *testing.T) {
	dir := t.TempDir()
	notPEM := filepath.Join(dir, "ca.txt")
	if err := os.WriteFile(notPEM, []byte("not a certificate\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for file, want := range map[string]string{
		filepath.Join(dir, "missing.pem"): "CA file: open " + filepath.Join(dir, "missing.pem") + ": no such file or directory",
		notPEM:                            "CA file " + notPEM + ": no PEM certificate in it",
	} {
		for _, tr := range []string{HTTP1, H2, H3, Auto, ""} {
			_, err := New(Options{URL: "https://127.0.0.1:1/", Transport: tr, CAFile: file}, every)
			if !errors.Is(err, ErrOptions) || err.Error() != ErrOptions.Error()+": "+want {
				t.Errorf("%s over %q: %v, want %q", filepath.Base(file), tr, err, want)
			}
		}
	}
}
