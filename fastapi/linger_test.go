package fastapi

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/wirebench/wirebench/internal/testkit"
)

// TestOverLimitBodyDrainIsBounded: a client that declares a body over the
// limit and keeps sending gets its 413 and loses the connection after
// lingerDelay, whatever it sends. The bound is lingerDelay plus 5 s of
// slack for a noisy 2-core box; without the deadline the drain would last
// as long as the client writes (10 s here).
func TestOverLimitBodyDrainIsBounded(t *testing.T) {
	const limit = 4096
	a := newAdapter(t)
	srv := NewServer(a.h, Options{MaxBody: limit, ReadHeader: 10 * time.Second, Read: 30 * time.Second,
		Write: 30 * time.Second, Idle: time.Minute, MaxHeaderBytes: 64 << 10})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Shutdown() })

	conn, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	conn.SetDeadline(time.Now().Add(20 * time.Second))
	fmt.Fprintf(conn, "POST /users HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n", 100<<20)
	stop := make(chan struct{})
	defer close(stop)
	writeFailed := make(chan time.Time, 1)
	go func() { // 10 s of body, 1 KiB every 10 ms
		chunk := []byte(strings.Repeat(" ", 1024))
		for range 1000 {
			select {
			case <-stop:
				return
			case <-time.After(10 * time.Millisecond):
			}
			if _, err := conn.Write(chunk); err != nil {
				writeFailed <- time.Now()
				return
			}
		}
	}()
	br := bufio.NewReader(conn)
	resp, err := http.ReadResponse(br, nil)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != 413 || !strings.Contains(string(body), `"too_large"`) {
		t.Fatalf("%d %q, want 413 too_large", resp.StatusCode, body)
	}
	// The server half-closes after the reply, drains, then closes: the
	// client's writes fail once it has.
	start := time.Now()
	if _, err := br.ReadByte(); err != io.EOF {
		t.Fatalf("after the 413: %v, want EOF (half-close)", err)
	}
	select {
	case at := <-writeFailed:
		if d := at.Sub(start); testkit.Timing() && d > lingerDelay+5*time.Second {
			t.Errorf("the body was drained for %v, want about %v", d, lingerDelay)
		}
	case <-time.After(lingerDelay + time.Minute): // a guard: a drain that never ends
		t.Errorf("the body is still drained %v after the 413, want about %v", lingerDelay+time.Minute, lingerDelay)
	}
}
