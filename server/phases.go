package server

import (
	"math"
	"net"

	"github.com/valyala/fasthttp"
)

// Phased timeouts, for the fasthttp engine.
//
// fasthttp arms the socket deadlines itself, three times per keep-alive
// request (idle, read, write), each behind a time.Now: through the
// watchdog the deadline is an atomic store, but the clock reads stay,
// about 3% of the engine's CPU per GET (issue 17). With phases, fasthttp
// is given no timeouts at all; the connection knows which phase its
// request is in from the calls it sees, and the watchdog applies the
// phase's limit from the coarse clock:
//
//	new       accept → first byte             min(ReadHeader, Read)
//	idle      next Read after a reply → byte  Idle
//	reading   first byte → handler starts     min(ReadHeader, Read)
//	handling  handler starts → next Read      Write
//
// which are fasthttp's own semantics for these settings (its ReadTimeout
// from the first byte, its IdleTimeout between requests, its
// WriteTimeout for the reply), handler time counted in Write as net/http
// counts it. A request with a body still gets the whole Read timeout: the
// HeaderReceived hook sets it as an explicit read deadline, which takes
// precedence over the phase's until the handler starts. A phase past its
// limit gets the socket deadline of its direction in the past: the
// blocked call fails and fasthttp answers (408) or closes the connection,
// as with its own deadlines.
const (
	phaseNew int32 = iota
	phaseIdle
	phaseReading
	phaseHandling
	// phaseOff: a connection that keeps its own deadlines (an h2c
	// connection of the net/http engine, netphases.go).
	phaseOff
)

// phaseLimits are the limits of the phases, in nanoseconds.
type phaseLimits [5]int64

func newPhaseLimits(t Timeouts) *phaseLimits {
	read := min(t.ReadHeader, t.Read)
	return &phaseLimits{phaseNew: int64(read), phaseIdle: int64(t.Idle), phaseReading: int64(read), phaseHandling: int64(t.Write), phaseOff: math.MaxInt64}
}

// phasedConn is a watched connection that tracks its request's phase.
type phasedConn struct {
	*watchedConn
}

func (c phasedConn) Read(p []byte) (int, error) {
	if c.phase.Load() == phaseHandling {
		// fasthttp reads the next request only once the reply is
		// flushed: the connection is idle from here.
		c.enter(phaseIdle)
		n, err := c.idle.Read(p) // the next request's first bytes
		if n > 0 {
			c.enter(phaseReading)
		}
		return n, err
	}
	n, err := c.Conn.Read(p)
	if n > 0 {
		if ph := c.phase.Load(); ph == phaseIdle || ph == phaseNew {
			c.enter(phaseReading)
		}
	}
	return n, err
}

// handlerStarted marks the request read: its explicit body deadline (if
// any) is over, and the Write limit runs from here.
func (c phasedConn) handlerStarted() {
	c.enter(phaseHandling)
	if v := c.read.Load(); v > 0 {
		c.read.CompareAndSwap(v, 0)
	}
}

func (c *watchedConn) enter(ph int32) {
	v := c.w.now.Load()
	c.since.Store(v)
	c.phase.Store(ph)
	// A tick published after the load may have passed this connection
	// before the store (watchdog.tick): count from that tick instead.
	if n := c.w.now.Load(); n != v {
		c.since.CompareAndSwap(v, n+1)
	}
}

// expirePhase applies the phase's limit, unless an explicit deadline of
// the same direction is set (the watchdog's expire enforces that one).
// Reading phases fail the blocked Read only, so that fasthttp can still
// write its 408; the handling phase fails the blocked Write.
func (c *watchedConn) expirePhase(limits *phaseLimits, now int64) {
	ph := c.phase.Load()
	if ph == phaseOff || c.since.Load()+limits[ph] > now {
		return
	}
	d, set := &c.read, c.Conn.SetReadDeadline
	if ph == phaseHandling {
		d, set = &c.write, c.Conn.SetWriteDeadline
	}
	c.mu.Lock()
	if d.CompareAndSwap(0, forced) {
		_ = set(aLongTimeAgo)
	}
	c.mu.Unlock()
}

// phasedHandler wraps the fasthttp server's handler so that it marks each
// request's handler start on its phased connection.
func phasedHandler(h fasthttp.RequestHandler) fasthttp.RequestHandler {
	return func(ctx *fasthttp.RequestCtx) {
		if c, ok := ctx.Conn().(phasedConn); ok {
			c.handlerStarted()
		}
		h(ctx)
	}
}

// newPhasedWatchdog watches ln's connections in phases (fasthttp must be
// given no timeouts of its own; see above).
func newPhasedWatchdog(ln net.Listener, t Timeouts) *watchdog {
	w := newWatchdog(ln, watchPeriod(t))
	w.phases = newPhaseLimits(t)
	return w
}
