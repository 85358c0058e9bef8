package main

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"io"
	"math/big"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/wirebench/wirebench/internal/testkit"
)

// TestPeerH2BesideH2load runs `wirebench load` over HTTP/2 against nginx,
// beside h2load (nghttp2's load client) on the same server, and checks
// its counts against nginx's own (stub_status):
//   - h2c and h2 over TLS with nginx's default of 1,000 requests per
//     connection, after which nginx sends GOAWAY: every request counted
//     once, none failed, one connection per 1,000 requests (and the ALPN
//     probe's over TLS);
//   - 200 VUs on one connection, past nginx's 128 streams: exactly one
//     connection (net/http's Transport opened a second);
//   - a 16 MiB POST that nginx answers 413 before reading it: every
//     request counted as the 413, the body bytes out within the wire
//     bytes (before, the transport's read-ahead counted 8× the wire);
//   - a 1 s run beside h2load -c1 -m10 on a server that keeps its
//     connections: at least 0.4× h2load's req/s. Our HTTP/2 client (x/net,
//     a goroutine per stream) costs more CPU per request than nghttp2's
//     event loop: 0.55–0.67× here (five 1-s pairs, 2026-11-26), client-bound on one CPU.
//
// It holds the machine's load lock itself: do not wrap it in flock.
func TestPeerH2BesideH2load(t *testing.T) {
	testkit.NeedPeers(t) // slow: CI's peer step (docs/testing.md)
	if testing.Short() {
		t.Skip("load runs; skipped with -short")
	}
	h2load := testkit.NeedTool(t, "h2load", "apt-get install -y nghttp2-client")
	testkit.NeedTool(t, "nginx", "apt-get install -y nginx")
	bin := testkit.Binary(t)
	unlock := loadLock(t)
	defer unlock()
	client, server := pinning()
	ng := startNginxH2(t, server)
	dir := t.TempDir()
	body := filepath.Join(dir, "body")
	if err := os.WriteFile(body, make([]byte, 16<<20), 0o644); err != nil {
		t.Fatal(err)
	}
	wb := func(t *testing.T, url string, args ...string) *resultAndServer {
		before := ng.status(t)
		res := runWirebench(t, slices.Concat(client, []string{bin, "load", "-q"}, args, []string{"--out"}), url)
		after := ng.status(t)
		r := &resultAndServer{res.Requests, res.Failed, after.requests - before.requests - 1, after.accepts - before.accepts - 1}
		t.Logf("%v: %d requests (%.0f/s), %d failed %v, status %v; nginx served %d on %d connections; bytes out %d wire, %d body; warnings %q",
			args, res.Requests, res.RPS(), res.Failed, res.Failures, res.Status, r.served, r.conns, res.Bytes.WireOut, res.Bytes.BodyOut, res.Warnings)
		if res.Failed != 0 || res.Requests == 0 || r.served != res.Requests {
			t.Errorf("wirebench counted %d requests, %d failed; nginx served %d", res.Requests, res.Failed, r.served)
		}
		if res.Bytes.BodyOut > res.Bytes.WireOut {
			t.Errorf("body bytes out %d above the wire's %d", res.Bytes.BodyOut, res.Bytes.WireOut)
		}
		return r
	}

	for _, c := range []struct{ name, url string }{{"h2c", ng.h2c}, {"h2 over TLS", ng.tls}} {
		t.Run(c.name+", GOAWAY every 1000 requests", func(t *testing.T) {
			args := []string{"-c", "10", "-n", "5500", "-k"} // TLS: ALPN picks h2
			if c.name == "h2c" {
				args = []string{"-c", "10", "-n", "5500", "--transport", "h2c"}
			}
			want := int64(6)
			if c.name != "h2c" {
				want++ // the ALPN probe's handshake
			}
			if r := wb(t, c.url, args...); r.conns != want {
				t.Errorf("%d connections for 5,500 requests, 1,000 each; want %d", r.conns, want)
			}
		})
	}
	t.Run("200 VUs on one connection past 128 streams", func(t *testing.T) {
		if r := wb(t, ng.keep, "--transport", "h2c", "-c", "200", "--conns", "1", "-n", "20000"); r.conns != 1 {
			t.Errorf("%d connections for --conns 1", r.conns)
		}
	})
	t.Run("16 MiB POST answered 413 unread", func(t *testing.T) {
		wb(t, ng.keep, "--transport", "h2c", "-c", "2", "-d", "1s", "-m", "POST", "-b", "@"+body, "--expect-status", "413")
	})
	t.Run("beside h2load", func(t *testing.T) {
		for attempt := 1; ; attempt++ {
			argv := slices.Concat(client, []string{h2load, "-c", "1", "-m", "10", "-D", "1", ng.keep})
			out, err := exec.Command(argv[0], argv[1:]...).CombinedOutput()
			m := h2loadRE.FindSubmatch(out)
			if err != nil || m == nil {
				t.Fatalf("h2load: %v\n%s", err, out)
			}
			peer, _ := strconv.ParseFloat(string(m[1]), 64)
			res := runWirebench(t, slices.Concat(client, []string{bin, "load", "-q", "--transport", "h2c", "-c", "10", "-d", "1s", "--out"}), ng.keep)
			t.Logf("pair %d: h2load %.0f req/s, wirebench %.0f req/s (%.2f×), %d failed", attempt, peer, res.RPS(), res.RPS()/peer, res.Failed)
			if res.Failed != 0 {
				t.Fatalf("wirebench: %d failed: %v", res.Failed, res.Failures)
			}
			if res.RPS() >= 0.4*peer {
				return
			}
			if attempt == 3 {
				t.Fatalf("wirebench %.0f req/s < 0.4 × h2load's %.0f in three pairs", res.RPS(), peer)
			}
		}
	})
}

var h2loadRE = regexp.MustCompile(`finished in [0-9.]+m?s, ([0-9.]+) req/s`)

type resultAndServer struct{ requests, failed, served, conns int64 }

type nginxH2 struct {
	h2c, tls, keep string // GOAWAY every 1,000 requests (h2c, TLS); keep-alive without limit (h2c)
	statusURL      string
}

type stubStatus struct{ accepts, requests int64 }

var stubRE = regexp.MustCompile(`\s(\d+)\s+(\d+)\s+(\d+)\s`)

// status reads nginx's counters (one connection and one request itself).
func (n *nginxH2) status(t *testing.T) stubStatus {
	t.Helper()
	var protos http.Protocols
	protos.SetUnencryptedHTTP2(true)
	c := &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{Protocols: &protos}}
	defer c.CloseIdleConnections()
	resp, err := c.Get(n.statusURL)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	m := stubRE.FindSubmatch(b)
	if m == nil {
		t.Fatalf("stub_status: %s", b)
	}
	a, _ := strconv.ParseInt(string(m[1]), 10, 64)
	r, _ := strconv.ParseInt(string(m[3]), 10, 64)
	return stubStatus{a, r}
}

// startNginxH2 runs nginx with three HTTP/2 servers: h2c and TLS with
// nginx's defaults (GOAWAY after 1,000 requests on a connection; 413 for
// bodies past 1 MiB), and h2c keeping its connections.
func startNginxH2(t *testing.T, pin []string) *nginxH2 {
	certDir := t.TempDir()
	cert, key := writeSelfSigned(t, certDir)
	addrs := testkit.StartNginx(t, pin, 3, func(dir string, addrs []string) string {
		return fmt.Sprintf(`	server {
		listen %[1]s http2;
		location = /status { stub_status; }
		location / { default_type text/plain; return 200 "hello\n"; }
	}
	server {
		listen %[2]s ssl http2;
		ssl_certificate %[4]s;
		ssl_certificate_key %[5]s;
		location / { default_type text/plain; return 200 "hello\n"; }
	}
	server {
		listen %[3]s http2;
		keepalive_requests 1000000;
		location / { default_type text/plain; return 200 "hello\n"; }
	}`, addrs[0], addrs[1], addrs[2], cert, key)
	})
	return &nginxH2{h2c: "http://" + addrs[0] + "/", tls: "https://" + addrs[1] + "/", keep: "http://" + addrs[2] + "/",
		statusURL: "http://" + addrs[0] + "/status"}
}

// writeSelfSigned writes a certificate for 127.0.0.1 and its key (PEM).
func writeSelfSigned(t *testing.T, dir string) (cert, key string) {
	k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "127.0.0.1"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(24 * time.Hour),
		IPAddresses: []net.IP{net.IPv4(127, 0, 0, 1)}, KeyUsage: x509.KeyUsageDigitalSignature,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &k.PublicKey, k)
	if err != nil {
		t.Fatal(err)
	}
	kb, err := x509.MarshalECPrivateKey(k)
	if err != nil {
		t.Fatal(err)
	}
	cert, key = filepath.Join(dir, "cert.pem"), filepath.Join(dir, "key.pem")
	if err := os.WriteFile(cert, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(key, pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: kb}), 0o600); err != nil {
		t.Fatal(err)
	}
	return cert, key
}
