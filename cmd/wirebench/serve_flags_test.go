package main

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/wirebench/wirebench/internal/testkit"
)

// TestServeTimeoutFlags: the timeout flags reach the server. A trickled
// body ends with 408 at --read-timeout, a keep-alive connection is closed
// at --idle-timeout. Bounds are the flag plus 5 s of slack for a noisy
// 2-core box; without the flags the defaults are 30 s and 2 min. Both
// REST engines.
func TestServeTimeoutFlags(t *testing.T) {
	for _, engine := range []string{"nethttp", "fasthttp"} {
		t.Run(engine, func(t *testing.T) { testServeTimeoutFlags(t, engine) })
	}
}

func testServeTimeoutFlags(t *testing.T, engine string) {
	const flag, slack = 300 * time.Millisecond, 5 * time.Second
	ctx, cancel := context.WithCancel(context.Background())
	pr, pw := io.Pipe()
	done := make(chan int, 1)
	go func() {
		var errb strings.Builder
		done <- run(ctx, &cliEnv{stdin: strings.NewReader(""), stdout: pw, stderr: &errb}, []string{"serve", "--http", "127.0.0.1:0", "--no-grpc", "--engine", engine,
			"--read-timeout", flag.String(), "--idle-timeout", flag.String(), "--write-timeout", "10s", "--h2-max-streams", "3", "--h2-stream-buffer", "65536"})
		pw.Close()
	}()
	defer func() {
		cancel()
		if code := <-done; code != 0 {
			t.Errorf("serve exited %d", code)
		}
	}()
	line, err := bufio.NewReader(pr).ReadString('\n')
	if err != nil {
		t.Fatal(err)
	}
	go io.Copy(io.Discard, pr)
	m := regexp.MustCompile(`http=(\S+)`).FindStringSubmatch(line)
	if m == nil {
		t.Fatalf("listening line %q", line)
	}

	conn, err := net.Dial("tcp", m[1])
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	conn.SetDeadline(time.Now().Add(time.Minute)) // a guard against a hang
	start := time.Now()
	fmt.Fprintf(conn, "POST /users HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{")
	go func() {
		for range 100 { // 100 × 100 ms = 10 s without the timeout
			time.Sleep(100 * time.Millisecond)
			if _, err := conn.Write([]byte(" ")); err != nil {
				return
			}
		}
	}()
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusRequestTimeout || (testkit.Timing() && time.Since(start) > flag+slack) {
		t.Errorf("trickled body: %d after %v, want 408 after --read-timeout %v", resp.StatusCode, time.Since(start), flag)
	}

	idle, err := net.Dial("tcp", m[1])
	if err != nil {
		t.Fatal(err)
	}
	defer idle.Close()
	fmt.Fprintf(idle, "GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n")
	br := bufio.NewReader(idle)
	if resp, err = http.ReadResponse(br, nil); err != nil {
		t.Fatal(err)
	}
	io.Copy(io.Discard, resp.Body)
	start = time.Now()
	idle.SetReadDeadline(time.Now().Add(time.Minute)) // a guard; EOF must come
	if _, err := br.ReadByte(); err != io.EOF {
		t.Errorf("idle connection: %v after %v, want EOF at --idle-timeout %v", err, time.Since(start), flag)
	}
}

// TestServeEngineFlag: an unknown engine is a usage error naming both.
func TestServeEngineFlag(t *testing.T) {
	var out, errb strings.Builder
	code := run(context.Background(), &cliEnv{stdin: strings.NewReader(""), stdout: &out, stderr: &errb}, []string{"serve", "--engine", "fiber", "--http", "127.0.0.1:0", "--no-grpc"})
	if code != 2 || !strings.Contains(errb.String(), "want nethttp or fasthttp") {
		t.Errorf("--engine fiber: exit %d, stderr %q", code, errb.String())
	}
}
