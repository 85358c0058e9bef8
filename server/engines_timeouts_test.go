package server_test

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net/http"
	"testing"
	"time"

	"github.com/wirebench/wirebench/internal/testkit"
	"github.com/wirebench/wirebench/server"
)

// TestFastHTTPTimeouts: the fasthttp engine's deadlines also go through the
// coarse watchdog (server/watchdog.go); a trickling client and an idle
// keep-alive connection are still cut at their timeouts.
func TestFastHTTPTimeouts(t *testing.T) {
	srv, err := server.Start(context.Background(), server.Options{
		HTTPAddr: "127.0.0.1:0", NoGRPC: true, SeedUsers: 1, Engine: server.EngineFastHTTP,
		Timeouts: server.Timeouts{Read: tick, Idle: tick},
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Close() })

	idle := dialTCP(t, srv.HTTPAddr())
	fmt.Fprintf(idle, "GET /users/1 HTTP/1.1\r\nHost: x\r\n\r\n")
	br := bufio.NewReader(idle)
	resp, err := http.ReadResponse(br, nil)
	if err != nil {
		t.Fatal(err)
	}
	io.Copy(io.Discard, resp.Body)
	start := time.Now()
	idle.SetReadDeadline(time.Now().Add(hang))
	if _, err := br.ReadByte(); err != io.EOF {
		t.Fatalf("idle connection: %v, want EOF", err)
	}
	if d := time.Since(start); d < tick/2 || (testkit.Timing() && d > tick+slack) {
		t.Errorf("idle connection closed after %v, idle timeout %v", d, tick)
	}

	slow := dialTCP(t, srv.HTTPAddr())
	start = time.Now()
	io.WriteString(slow, "GET /users/1 HTTP/1.1\r\nHost: x\r\nX-Slow: ")
	go func() { // 1000 × 50 ms = 50 s without the timeout
		for range 1000 {
			time.Sleep(50 * time.Millisecond)
			if _, err := slow.Write([]byte("a")); err != nil {
				return
			}
		}
	}()
	slow.SetReadDeadline(time.Now().Add(hang))
	_, _ = io.Copy(io.Discard, slow)
	if d := time.Since(start); testkit.Timing() && d > tick+slack {
		t.Errorf("slow headers: connection still open after %v, read timeout %v", d, tick)
	}
}
