package server

import (
	"errors"
	"net"
	"os"
	"testing"
	"time"

	"github.com/wirebench/wirebench/internal/testkit"
)

// TestWatchdogDeadlines: a deadline set through the watchdog cuts a blocked
// Read about when it passes (a period late at most), a past one at once,
// and a later deadline (or none) set afterwards lets the connection work
// again, as with the socket's own deadlines.
func TestWatchdogDeadlines(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	const period = 20 * time.Millisecond
	w := newWatchdog(ln, period)
	defer w.Close()
	peer, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer peer.Close()
	c, err := w.Accept()
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	buf := make([]byte, 8)

	start := time.Now()
	c.SetReadDeadline(start.Add(100 * time.Millisecond))
	if _, err := c.Read(buf); !errors.Is(err, os.ErrDeadlineExceeded) {
		t.Fatalf("read past its deadline: %v, want %v", err, os.ErrDeadlineExceeded)
	}
	// Generous upper bound: the box is shared; what matters is that the
	// read was cut, not left blocked.
	if d := time.Since(start); d < 100*time.Millisecond || (testkit.Timing() && d > 5*time.Second) {
		t.Fatalf("read cut after %v, want 100ms plus at most a period (and scheduling)", d)
	}
	c.SetReadDeadline(time.Time{})
	peer.Write([]byte("x"))
	if n, err := c.Read(buf); err != nil || n != 1 {
		t.Fatalf("read after clearing the deadline: %d, %v", n, err)
	}

	c.SetReadDeadline(time.Unix(1, 0)) // net/http's abort: at once
	if _, err := c.Read(buf); !errors.Is(err, os.ErrDeadlineExceeded) {
		t.Fatalf("read with a past deadline: %v", err)
	}
	c.SetReadDeadline(time.Now().Add(time.Hour))
	peer.Write([]byte("y"))
	if n, err := c.Read(buf); err != nil || n != 1 {
		t.Fatalf("read after a later deadline: %d, %v", n, err)
	}

	c.SetWriteDeadline(time.Now().Add(50 * time.Millisecond))
	big := make([]byte, 1<<20)
	var werr error
	for range 256 { // the peer reads nothing: the socket buffers fill
		if _, werr = c.Write(big); werr != nil {
			break
		}
	}
	if !errors.Is(werr, os.ErrDeadlineExceeded) {
		t.Fatalf("write to a peer that does not read: %v, want %v", werr, os.ErrDeadlineExceeded)
	}

	c.Close()
	w.mu.Lock()
	n := len(w.conns)
	w.mu.Unlock()
	if n != 0 {
		t.Fatalf("%d connections watched after Close", n)
	}
}
