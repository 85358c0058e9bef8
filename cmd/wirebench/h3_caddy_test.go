package main

import (
	"context"
	"encoding/json"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/wirebench/wirebench/internal/testkit"
	"github.com/wirebench/wirebench/results"
)

// caddyH3 is Caddy serving testdata/h3.Caddyfile: its port and its
// access log.
type caddyH3 struct {
	url, log string
}

// startCaddyH3 runs Caddy on a free port (TCP and UDP), its state in a
// temporary directory, until the test ends.
func startCaddyH3(t *testing.T, caddy string) caddyH3 {
	t.Helper()
	dir := t.TempDir()
	port := freeTCPUDPPort(t)
	conf, err := filepath.Abs("testdata/h3.Caddyfile")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	cmd := exec.CommandContext(ctx, caddy, "run", "--adapter", "caddyfile", "--config", conf)
	cmd.Env = append(os.Environ(), "DIR="+dir, "PORT="+strconv.Itoa(port), `BODY={"id":1,"name":"caddy"}`,
		"HOME="+dir, "XDG_DATA_HOME="+dir, "XDG_CONFIG_HOME="+dir)
	out, err := os.Create(filepath.Join(dir, "caddy.out"))
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stdout, cmd.Stderr = out, out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cancel(); cmd.Wait(); out.Close() })
	c := caddyH3{url: "https://localhost:" + strconv.Itoa(port) + "/users/1", log: filepath.Join(dir, "access.log")}
	// Serving once it says so (its sockets, TCP and UDP, are bound then)
	// and the TCP port answers.
	for deadline := time.Now().Add(30 * time.Second); ; {
		if b, _ := os.ReadFile(out.Name()); strings.Contains(string(b), "serving initial configuration") {
			if conn, err := net.DialTimeout("tcp", "127.0.0.1:"+strconv.Itoa(port), time.Second); err == nil {
				conn.Close()
				return c
			}
		}
		if time.Now().After(deadline) || ctx.Err() != nil {
			b, _ := os.ReadFile(out.Name())
			t.Fatalf("caddy did not start:\n%s", b)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// freeTCPUDPPort is a port free on 127.0.0.1 for both TCP and UDP when
// asked (HTTPS and HTTP/3 share it).
func freeTCPUDPPort(t *testing.T) int {
	t.Helper()
	for range 20 {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		port := ln.Addr().(*net.TCPAddr).Port
		pc, err := net.ListenPacket("udp", ln.Addr().String())
		ln.Close()
		if err == nil {
			pc.Close()
			return port
		}
	}
	t.Fatal("no port free for both TCP and UDP")
	return 0
}

// accessLog reads Caddy's access log once it has n lines and has stopped
// growing (Caddy writes a line after the reply has gone).
func (c caddyH3) accessLog(t *testing.T, n int) []string {
	t.Helper()
	var lines []string
	stable := 0
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		b, err := os.ReadFile(c.log)
		if err != nil {
			t.Fatal(err)
		}
		now := strings.Split(strings.TrimSuffix(string(b), "\n"), "\n")
		if len(b) == 0 {
			now = nil
		}
		if len(now) == len(lines) && len(now) >= n {
			if stable++; stable >= 4 {
				break
			}
		} else {
			stable = 0
		}
		lines = now
	}
	return lines
}

// TestPeerCaddyH3: our HTTP/3 client against an HTTP/3 server nobody here
// wrote (Caddy, on quic-go too, but its own HTTP stack, configuration and
// logging): the requests the client counts, closed loop with -n and open
// loop with -r, are exactly the lines of Caddy's access log, each a 200
// over HTTP/3.0.
func TestPeerCaddyH3(t *testing.T) {
	testkit.NeedPeers(t) // starts Caddy: CI's peer step (docs/testing.md)
	caddy := testkit.NeedTool(t, "caddy", "apt-get install -y caddy")
	bin := testkit.Binary(t)
	defer loadLock(t)()
	c := startCaddyH3(t, caddy)
	total := 0
	for _, args := range [][]string{
		{"-c", "8", "--conns", "2", "-n", "500"},
		{"-r", "400", "-d", "1s", "-c", "8", "--conns", "2"},
	} {
		f := filepath.Join(t.TempDir(), "result.json")
		argv := append([]string{"load", "-q", "--transport", "h3", "-k", "--out", f}, append(args, c.url)...)
		out, err := exec.Command(bin, argv...).CombinedOutput()
		if err != nil {
			t.Fatalf("%v: %v\n%s", argv, err, out)
		}
		rf, err := os.Open(f)
		if err != nil {
			t.Fatal(err)
		}
		res, err := results.ReadLoad(rf)
		rf.Close()
		if err != nil {
			t.Fatal(err)
		}
		if res.Requests == 0 || res.Failed != 0 {
			t.Fatalf("%v: %d requests, %d failed (%v)\n%s", argv, res.Requests, res.Failed, res.Failures, out)
		}
		total += int(res.Requests)
		lines := c.accessLog(t, total)
		if len(lines) != total {
			t.Errorf("%v: the client counted %d requests (%d in all so far), Caddy's access log has %d lines", argv, res.Requests, total, len(lines))
		}
		for i, l := range lines {
			var e struct {
				Status  int `json:"status"`
				Request struct {
					Proto string `json:"proto"`
					URI   string `json:"uri"`
				} `json:"request"`
			}
			if err := json.Unmarshal([]byte(l), &e); err != nil || e.Status != 200 || e.Request.Proto != "HTTP/3.0" || e.Request.URI != "/users/1" {
				t.Fatalf("access log line %d: %v: %s", i+1, err, l)
			}
		}
	}
}
