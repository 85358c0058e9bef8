package replay

import (
	"encoding/pem"
	"errors"
	"io"
	"log"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/wirebench/wirebench/load/conn"
)

// tlsServer serves s's handler over TLS (HTTP/1.1 and h2 by ALPN) on
// 127.0.0.1:0 and returns its https:// URL and its certificate's PEM file.
func tlsServer(t *testing.T, s *seen) (url, caFile string) {
	t.Helper()
	srv := httptest.NewUnstartedServer(s.handler())
	srv.EnableHTTP2 = true
	srv.Config.ErrorLog = log.New(io.Discard, "", 0) // refused handshakes are TestReplayHTTPSVerifies's point
	srv.StartTLS()
	t.Cleanup(srv.Close)
	caFile = filepath.Join(t.TempDir(), "ca.pem")
	pemBytes := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw})
	if err := os.WriteFile(caFile, pemBytes, 0o600); err != nil {
		t.Fatal(err)
	}
	return srv.URL, caFile
}

// TestReplayHTTPS: an https:// target gets the recording over HTTP/1.1
// over TLS (default) and h2, verified against --cacert or not checked
// with -k; every request arrives over the protocol asked for.
func TestReplayHTTPS(t *testing.T) {
	for _, c := range []struct {
		name, transport, proto string
		insecure               bool
	}{
		{"http1 cacert", "", "HTTP/1.1", false},
		{"http1 insecure", conn.HTTP1, "HTTP/1.1", true},
		{"h2 cacert", conn.H2, "HTTP/2.0", false},
		{"h2 insecure", conn.H2, "HTTP/2.0", true},
	} {
		t.Run(c.name, func(t *testing.T) {
			s := newSeen()
			url, ca := tlsServer(t, s)
			o := Options{Options: conn.Options{URL: url, Transport: c.transport, Insecure: c.insecure}}
			if !c.insecure {
				o.CAFile = ca
			}
			replayAndCheck(t, s, o, c.proto)
		})
	}
}

// TestReplayHTTPSVerifies: without -k or --cacert the test server's
// certificate is refused: every request fails, none arrives.
func TestReplayHTTPSVerifies(t *testing.T) {
	for _, tr := range []string{conn.HTTP1, conn.H2} {
		t.Run(tr, func(t *testing.T) {
			s := newSeen()
			url, _ := tlsServer(t, s)
			res := runReplay(t, Options{File: recording(t), Options: conn.Options{URL: url, Transport: tr, Timeout: 5 * time.Second}, Speed: 4})
			s.mu.Lock()
			defer s.mu.Unlock()
			// Every request fails; the run may stop before the 60 (a
			// handshake no retry passes ends it early, with the cause).
			if res.Failed != res.Requests || (res.Requests != 60 && res.Stop == nil) || res.Requests < 20 || len(s.targets) != 0 {
				t.Fatalf("%d requests, %d failed (%v); the server saw %d", res.Requests, res.Failed, res.Failures, len(s.targets))
			}
		})
	}
}

// TestReplayTransportUsage: a scheme that cannot carry the transport, or
// a CA file that holds no certificate, is an error before any request.
func TestReplayTransportUsage(t *testing.T) {
	bad := filepath.Join(t.TempDir(), "bad.pem")
	os.WriteFile(bad, []byte("not pem"), 0o600)
	for _, c := range []struct {
		o    Options
		want string
	}{
		{Options{Options: conn.Options{URL: "http://127.0.0.1:1", Transport: conn.H2}}, "use an https:// target, or h2c"},
		{Options{Options: conn.Options{URL: "http://127.0.0.1:1", Transport: conn.H3}}, "use an https:// target"},
		{Options{Options: conn.Options{URL: "https://127.0.0.1:1", Transport: conn.H2C}}, "use --transport h2 for an https:// target"},
		{Options{Options: conn.Options{URL: "ftp://127.0.0.1:1"}}, "want http:// or https://"},
		{Options{Options: conn.Options{URL: "https://127.0.0.1:1", Transport: "spdy"}}, "want http1, h2c, h2 or h3"},
		{Options{Options: conn.Options{URL: "https://127.0.0.1:1", CAFile: bad}}, "no PEM certificate"},
		{Options{Options: conn.Options{URL: "https://127.0.0.1:1", Transport: conn.H3, CAFile: bad}}, "no PEM certificate"},
	} {
		c.o.File = recording(t)
		_, err := New(c.o)
		if !errors.Is(err, ErrReplay) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%+v: %v, want ErrReplay saying %q", c.o, err, c.want)
		}
	}
}
