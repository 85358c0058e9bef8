package main

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/wirebench/wirebench/internal/testkit"
)

// h3Python is the Python with aioquic that .ci/run installs.
const (
	h3Python        = "/tmp/h3venv/bin/python"
	h3PythonInstall = "python3 -m venv /tmp/h3venv && /tmp/h3venv/bin/pip install aioquic==1.7.2"
)

// h3Serve is `serve --http3` on free ports: its TCP and UDP addresses,
// the certificate it wrote, and the fingerprint it printed.
type h3Serve struct {
	http, https, h3, cert, sha256, spki string
}

func startServeH3(t *testing.T, bin string, extra ...string) h3Serve {
	t.Helper()
	s := h3Serve{cert: filepath.Join(t.TempDir(), "h3.pem")}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	cmd := exec.CommandContext(ctx, bin, append([]string{"serve", "--http", "127.0.0.1:0", "--grpc", "127.0.0.1:0",
		"--http3", "127.0.0.1:0", "--cert-out", s.cert, "--seed-users", "5"}, extra...)...)
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cancel(); cmd.Wait() })
	// The certificate line comes first, on stderr, then the listening line.
	errLine, err := bufio.NewReader(stderr).ReadString('\n')
	if err != nil {
		t.Fatal(err)
	}
	go io.Copy(io.Discard, stderr)
	m := regexp.MustCompile(`^TLS certificate \(self-signed, generated\): sha256 ([0-9A-F:]{95}) spki-sha256 (\S{44})\n$`).FindStringSubmatch(errLine)
	if m == nil {
		t.Fatalf("certificate line %q", errLine)
	}
	s.sha256, s.spki = strings.ReplaceAll(m[1], ":", ""), m[2]
	line, err := bufio.NewReader(stdout).ReadString('\n')
	if err != nil {
		t.Fatal(err)
	}
	m = regexp.MustCompile(`^listening http=(\S+) grpc=\S+(?: https=(\S+))? h3=(\S+)\n$`).FindStringSubmatch(line)
	if m == nil {
		t.Fatalf("listening line %q", line)
	}
	s.http, s.https, s.h3 = m[1], m[2], m[3]
	return s
}

// counters reads the server's own HTTP/3 counters from /metrics.
func (s h3Serve) counters(t *testing.T) (requests, conns int64) {
	t.Helper()
	return testkit.Metric(t, s.http, "wirebench_h3_requests_total"), testkit.Metric(t, s.http, "wirebench_h3_connections_total")
}

// TestPeerH3 runs `serve --http3` against an HTTP/3 stack nobody here
// wrote (aioquic, in Python) and against our own load client: each side's
// count of requests is the server's own (/metrics), exactly, and so is the
// count of QUIC connections.
func TestPeerH3(t *testing.T) {
	testkit.NeedPeers(t) // slow: CI's peer step (docs/testing.md)
	bin := testkit.Binary(t)
	defer loadLock(t)()
	srv := startServeH3(t, bin)
	_, port, _ := strings.Cut(srv.h3, ":")

	t.Run("aioquic", func(t *testing.T) {
		if _, err := os.Stat(h3Python); err != nil {
			if testkit.InCI() {
				t.Fatalf("aioquic not installed in CI; .ci/run must run: %s", h3PythonInstall)
			}
			t.Skipf("aioquic not installed (install with: %s)", h3PythonInstall)
		}
		req0, conn0 := srv.counters(t)
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		defer cancel()
		out, err := exec.CommandContext(ctx, h3Python, "testdata/h3client.py", "--ca", srv.cert, "--n", "200", "--k", "8", "127.0.0.1", port).Output()
		if err != nil {
			var stderr []byte
			if ee, ok := err.(*exec.ExitError); ok {
				stderr = ee.Stderr
			}
			t.Fatalf("aioquic client: %v\n%s\n%s", err, out, stderr)
		}
		var rep struct {
			Requests int64            `json:"requests"`
			Statuses map[string]int64 `json:"statuses"`
			Bad      int              `json:"bad"`
			ALPN     string           `json:"alpn"`
			SHA256   string           `json:"cert_sha256"`
		}
		if err := json.Unmarshal(out, &rep); err != nil {
			t.Fatalf("%v: %s", err, out)
		}
		if rep.Requests != 201 || rep.Statuses["200"] != 201 || rep.Bad != 0 || rep.ALPN != "h3" {
			t.Errorf("aioquic: %+v, want 201 requests, all 200 and checked, over h3", rep)
		}
		if rep.SHA256 != srv.sha256 {
			t.Errorf("aioquic saw certificate %s, serve printed %s", rep.SHA256, srv.sha256)
		}
		req, conn := srv.counters(t)
		if req-req0 != rep.Requests || conn-conn0 != 1 {
			t.Errorf("server counted %d requests on %d connections, aioquic sent %d on 1", req-req0, conn-conn0, rep.Requests)
		}
	})

	t.Run("load", func(t *testing.T) {
		for _, args := range [][]string{
			{"-c", "8", "--conns", "2", "-n", "3000", "--cacert", srv.cert},
			{"-c", "6", "--conns", "3", "-r", "400", "-n", "400", "-k"},
		} {
			req0, conn0 := srv.counters(t)
			argv := append([]string{bin, "load", "--transport", "h3", "-q"}, args...)
			res := runWirebench(t, append(argv, "--out"), "https://"+srv.h3+"/users/1")
			req, conn := srv.counters(t)
			conns, _ := strconv.Atoi(args[3])
			if res.Failed != 0 || res.Requests == 0 {
				t.Errorf("%v: %d requests, failures %v", args, res.Requests, res.Failures)
			}
			// Exact: a request cut by the run's end (none in closed loop
			// with -n) may or may not have reached the server.
			if n := req - req0; n < res.Requests || n > res.Requests+res.Interrupted || conn-conn0 != int64(conns) {
				t.Errorf("%v: server counted %d requests on %d connections; client %d (+%d interrupted) on %d",
					args, req-req0, conn-conn0, res.Requests, res.Interrupted, conns)
			}
			if res.Conn == nil || len(res.Conn.Handshakes) != conns {
				t.Errorf("%v: conn %+v, want %d handshakes", args, res.Conn, conns)
			}
			if res.Bytes.WireIn <= res.Bytes.BodyIn || res.Bytes.BodyIn == 0 {
				t.Errorf("%v: bytes %+v", args, res.Bytes)
			}
		}
	})
}

// TestPeerH3Chromium: headless chromium, forced onto QUIC for the server's
// origin and pinning the printed SPKI hash (nothing else trusts the
// generated certificate), loads a user over HTTP/3 — the UDP port has no
// TCP listener, so nothing else could answer — and the server counts it.
func TestPeerH3Chromium(t *testing.T) {
	testkit.NeedPeers(t)
	chromium := testkit.NeedTool(t, "chromium", "apt-get install -y chromium")
	bin := testkit.Binary(t)
	defer loadLock(t)()
	srv := startServeH3(t, bin)
	_, port, _ := strings.Cut(srv.h3, ":")
	req0, conn0 := srv.counters(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	origin := "localhost:" + port
	out, err := exec.CommandContext(ctx, chromium, "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
		"--user-data-dir="+t.TempDir(), "--enable-quic", "--origin-to-force-quic-on="+origin,
		"--ignore-certificate-errors-spki-list="+srv.spki, "--host-resolver-rules=MAP localhost 127.0.0.1",
		"--dump-dom", "https://"+origin+"/users/1").Output()
	if err != nil {
		t.Fatalf("chromium: %v\n%s", err, out)
	}
	if !strings.Contains(string(out), `{"id":1,`) {
		t.Fatalf("chromium's page has no user 1:\n%s", out)
	}
	req, conn := srv.counters(t)
	if req-req0 < 1 || conn-conn0 < 1 {
		t.Errorf("server counted %d requests on %d QUIC connections from chromium, want at least 1 each", req-req0, conn-conn0)
	}
}
