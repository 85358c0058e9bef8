package server

import (
	"bytes"
	"fmt"
	"math"
	"net"
	"testing"
	"time"

	"github.com/valyala/fasthttp"
)

// TestPhasedWriteTimeout: a client that asks for a large reply and does
// not read it loses the connection at the write timeout (the handling
// phase's limit), seen from fasthttp's own count of open connections.
func TestPhasedWriteTimeout(t *testing.T) {
	const write = 200 * time.Millisecond
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	w := newPhasedWatchdog(ln, Timeouts{ReadHeader: time.Minute, Read: time.Minute, Write: write, Idle: time.Minute})
	big := bytes.Repeat([]byte("x"), 16<<20) // more than the socket buffers hold
	srv := &fasthttp.Server{Handler: phasedHandler(func(ctx *fasthttp.RequestCtx) { ctx.SetBody(big) })}
	go srv.Serve(w)
	defer srv.Shutdown()

	c, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.(*net.TCPConn).SetReadBuffer(4096) // a small window: the server's write blocks
	// start before the request: a test descheduled between sending it and
	// reading the clock saw the close "early" (99.9 ms) on a busy machine.
	start := time.Now()
	fmt.Fprintf(c, "GET / HTTP/1.1\r\nHost: x\r\n\r\n")
	for srv.GetOpenConnectionsCount() == 0 {
		if time.Since(start) > time.Minute { // a guard against a hang
			t.Fatal("the connection never opened")
		}
		time.Sleep(5 * time.Millisecond)
	}
	for srv.GetOpenConnectionsCount() != 0 {
		// Generous: the limit plus a watchdog period, on a loaded machine.
		if d := time.Since(start); d > write+time.Minute { // a guard; how soon: TestPhaseLimits
			t.Fatalf("connection still open %v after the request, write timeout %v", d, write)
		}
		time.Sleep(10 * time.Millisecond)
	}
	if d := time.Since(start); d < write/2 {
		t.Errorf("connection closed after %v, before the write timeout %v", d, write)
	}
}

// TestPhaseLimits: each phase gets the timeout fasthttp would apply.
func TestPhaseLimits(t *testing.T) {
	l := newPhaseLimits(Timeouts{ReadHeader: 1, Read: 2, Write: 3, Idle: 4})
	want := phaseLimits{phaseNew: 1, phaseIdle: 4, phaseReading: 1, phaseHandling: 3, phaseOff: math.MaxInt64}
	if *l != want {
		t.Errorf("limits %v, want %v", *l, want)
	}
	l = newPhaseLimits(Timeouts{ReadHeader: 5, Read: 2, Write: 3, Idle: 4})
	if l[phaseNew] != 2 || l[phaseReading] != 2 {
		t.Errorf("read limits %v, want min(ReadHeader, Read) = 2", *l)
	}
}

// TestPhaseNeverEarlyOnAStaleTick: a watchdog descheduled for longer than
// its period left the coarse clock stale, and a phase stamped from it ran
// out early (CI: a 200 ms write limit hit after 74 ms). A phase stamped
// between two ticks counts from the later one.
func TestPhaseNeverEarlyOnAStaleTick(t *testing.T) {
	const limit = 200 * time.Millisecond
	w := &watchdog{conns: map[*watchedConn]struct{}{}, phases: newPhaseLimits(Timeouts{ReadHeader: limit, Read: limit, Write: limit, Idle: limit})}
	a, b := net.Pipe()
	defer a.Close()
	defer b.Close()
	c := &watchedConn{Conn: a, w: w}
	w.conns[c] = struct{}{}
	t0 := int64(1e12)
	w.now.Store(t0)
	c.enter(phaseHandling) // really at t0+150 ms: the clock is stale
	w.tick(t0+int64(150*time.Millisecond), nil)
	w.tick(t0+int64(limit), nil)
	if c.write.Load() == forced {
		t.Fatalf("write limit applied %v after a stamp of a stale clock; at least %v after its next tick is due", limit, limit)
	}
	w.tick(t0+int64(150*time.Millisecond+limit)+1, nil)
	if c.write.Load() != forced {
		t.Errorf("write limit not applied %v after the tick that followed the stamp", limit)
	}
}
