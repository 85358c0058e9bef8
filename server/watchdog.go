package server

import (
	"errors"
	"net"
	"sync"
	"sync/atomic"
	"time"

	"github.com/wirebench/wirebench/internal/idleread"
	"github.com/wirebench/wirebench/internal/tick"
)

// A watchdog enforces the REST connections' read and write deadlines
// coarsely, in place of the runtime's per-connection timers.
//
// Given our four timeouts, net/http armed a socket deadline about seven
// times per keep-alive request (header, whole request, write, idle, and
// its background read's reset), each re-arming a runtime timer under the
// poller's lock — 4–5% of the server's CPU per GET in a profile (issue
// 17), all of it work the bare handler never does. HTTP/1 connections now
// keep their limits in phases (phases.go, netphases.go); h2c streams'
// deadlines and the calls net/http still makes (clearing deadlines,
// aborting its background read) come here. A future deadline is one atomic
// store; a single goroutine looks at every connection each period and
// applies a deadline that has passed to the socket itself (a deadline in
// the past), so a blocked Read or Write fails with os.ErrDeadlineExceeded
// exactly as it would have, at most one period late. A deadline already
// in the past when set (net/http's way of aborting its background read) is
// applied at once (aLongTimeAgo). The limits are thus unchanged, their precision is the
// period (a tenth of the shortest timeout, at most 250 ms), and with every P
// busy up to the runtime's 10 ms network poll more (package tick).
type watchdog struct {
	net.Listener
	period time.Duration

	// now is the Unix nanoseconds of the last tick (of the start before
	// the first): deadlines before it have passed.
	now atomic.Int64

	// phases, when set, puts the connections in phases (phases.go);
	// netHTTP picks net/http's flavour of them (netphases.go).
	phases  *phaseLimits
	netHTTP bool

	mu    sync.Mutex
	conns map[*watchedConn]struct{}
	done  chan struct{}
	once  sync.Once
}

// forced marks a deadline the watchdog (or a past deadline) has applied
// to the socket: the next one set must be applied to the socket too.
const forced = -1

// watchPeriod is a tenth of the shortest of the timeouts, between 5 ms and
// 250 ms: late by at most 10% of a limit, and a handful of wake-ups per
// second on an idle server.
func watchPeriod(t Timeouts) time.Duration {
	shortest := min(t.ReadHeader, t.Read, t.Write, t.Idle)
	return min(max(shortest/10, 5*time.Millisecond), 250*time.Millisecond)
}

func newWatchdog(ln net.Listener, period time.Duration) *watchdog {
	w := &watchdog{Listener: ln, period: period, conns: map[*watchedConn]struct{}{}, done: make(chan struct{})}
	w.now.Store(time.Now().UnixNano())
	go w.run()
	return w
}

func (w *watchdog) Accept() (net.Conn, error) {
	c, err := w.Listener.Accept()
	if err != nil {
		return nil, err
	}
	wc := &watchedConn{Conn: c, w: w}
	w.mu.Lock()
	w.conns[wc] = struct{}{}
	w.mu.Unlock()
	if w.phases != nil {
		wc.idle.Init(c)
		wc.enter(phaseNew)
		if w.netHTTP {
			return httpPhasedConn{wc}, nil
		}
		return phasedConn{wc}, nil
	}
	return wc, nil
}

// Close closes the listener and stops the watchdog; connections already
// accepted are closed by their server.
func (w *watchdog) Close() error {
	w.once.Do(func() { close(w.done) })
	return w.Listener.Close()
}

func (w *watchdog) run() {
	// Not a time.Ticker: one in the runtime's timer heap makes the
	// scheduler read the clock on every goroutine switch (package tick).
	t := tick.New(w.period)
	defer t.Stop()
	var live []*watchedConn
	for {
		select {
		case <-w.done:
			return
		case <-t.C:
			// The clock, not the tick's time: a watchdog descheduled
			// for a while receives a stale tick, and the stamps taken
			// from it would run early.
			live = w.tick(time.Now().UnixNano(), live)
		}
	}
}

// tick publishes the time n and applies every deadline and phase limit
// passed by then; live is scratch space, returned for reuse.
func (w *watchdog) tick(n int64, live []*watchedConn) []*watchedConn {
	old := w.now.Swap(n)
	// Collected after publishing: a connection accepted later stamps n.
	live = live[:0]
	w.mu.Lock()
	for c := range w.conns {
		live = append(live, c)
	}
	w.mu.Unlock()
	for _, c := range live {
		c.expire(&c.read, n, c.Conn.SetReadDeadline)
		c.expire(&c.write, n, c.Conn.SetWriteDeadline)
		if w.phases != nil {
			// A phase stamped since the last tick began somewhere
			// between old and n: counted from n, its limit is never
			// cut short, however long the watchdog waited for this
			// tick (at most one period late when it runs on time).
			// n+1, not n: the next tick must not take it for a stamp
			// of its own interval and move it again.
			c.since.CompareAndSwap(old, n+1)
			c.expirePhase(w.phases, n)
		}
	}
	clear(live)
	return live
}

// watchedConn keeps its deadlines as Unix nanoseconds (0: none; forced:
// applied to the socket).
type watchedConn struct {
	net.Conn
	w           *watchdog
	read, write atomic.Int64
	// mu orders the socket deadline calls of the slow path, so that a
	// deadline set just after the watchdog fired is the one that stays.
	mu     sync.Mutex
	closed atomic.Bool
	// phase and since (coarse Unix ns) track the request under phased
	// timeouts (phases.go); unused otherwise.
	phase atomic.Int32
	since atomic.Int64
	// idle makes the read after a reply (phases only; used by the
	// connection's reading goroutine alone).
	idle idleread.Reader
	// reading counts the net/http engine's Reads in progress; readPast
	// is a read deadline already past kept here instead of in the socket
	// (httpPhasedConn.SetReadDeadline).
	reading  atomic.Int32
	readPast atomic.Bool
}

// aLongTimeAgo is the deadline that makes a blocked call return at once.
var aLongTimeAgo = time.Unix(1, 0)

// expire applies *d to the socket if it has passed.
func (c *watchedConn) expire(d *atomic.Int64, now int64, set func(time.Time) error) {
	v := d.Load()
	if v <= 0 || v > now {
		return
	}
	c.mu.Lock()
	if d.CompareAndSwap(v, forced) {
		_ = set(aLongTimeAgo)
	}
	c.mu.Unlock()
}

// setDeadline records t in *d, touching the socket only when t has already
// passed or the socket holds a deadline the watchdog applied.
func (c *watchedConn) setDeadline(d *atomic.Int64, t time.Time, set func(time.Time) error) error {
	if t.IsZero() {
		// No deadline where there is none: net/http clears its deadlines
		// about six times per request. A load instead of the swap: were
		// the watchdog to force one between the two, it is as if this
		// call had come just before it.
		if d.Load() == 0 {
			return nil
		}
		return c.setDeadlineNs(d, 0, set)
	}
	return c.setDeadlineNs(d, t.UnixNano(), set)
}

// setDeadlineNs is setDeadline of a Unix nanosecond time (0: none).
func (c *watchedConn) setDeadlineNs(d *atomic.Int64, v int64, set func(time.Time) error) error {
	// The last tick's time, not time.Now (a measurable part of the
	// saving): a deadline between the two is applied by the next tick,
	// as any other.
	if v != 0 && v <= c.w.now.Load() {
		c.mu.Lock()
		d.Store(forced)
		err := set(time.Unix(0, v))
		c.mu.Unlock()
		return err
	}
	if d.Swap(v) == forced {
		c.mu.Lock()
		// Unless the watchdog fired again since, clear the socket's past
		// deadline (v itself is enforced by the watchdog).
		var err error
		if d.Load() != forced {
			err = set(time.Time{})
		}
		c.mu.Unlock()
		return err
	}
	return nil
}

// SetReadDeadline and SetWriteDeadline answer net/http's usual call, no
// deadline where there is none, before building the socket's method
// value for setDeadline (its first case; ~6 calls a GET).
func (c *watchedConn) SetReadDeadline(t time.Time) error {
	if t.IsZero() && c.read.Load() == 0 {
		return nil
	}
	return c.setDeadline(&c.read, t, c.Conn.SetReadDeadline)
}

func (c *watchedConn) SetWriteDeadline(t time.Time) error {
	if t.IsZero() && c.write.Load() == 0 {
		return nil
	}
	return c.setDeadline(&c.write, t, c.Conn.SetWriteDeadline)
}

func (c *watchedConn) SetDeadline(t time.Time) error {
	return errors.Join(c.SetReadDeadline(t), c.SetWriteDeadline(t))
}

func (c *watchedConn) Close() error {
	if c.closed.CompareAndSwap(false, true) {
		c.w.mu.Lock()
		delete(c.w.conns, c)
		c.w.mu.Unlock()
	}
	return c.Conn.Close()
}

// CloseWrite keeps net/http's half-close before it drops a connection
// after an error reply (so the client reads the reply, not a reset).
func (c *watchedConn) CloseWrite() error {
	if cw, ok := c.Conn.(interface{ CloseWrite() error }); ok {
		return cw.CloseWrite()
	}
	return nil
}
