package httpapi

import (
	"context"
	"sync"
	"sync/atomic"
)

// connReplies is one connection's share of the reply budget: the bytes of
// its large replies being encoded or written (small ones, those that need
// no encoding slot, are not counted). A client that opens many streams on
// one connection and reads none of them (HTTP/3, h2) would otherwise make
// the server encode a large reply for each, until the whole budget is
// held: the encodings take the CPU the server's other clients need, and
// a never-read reply is encoded for nothing. Past its share a
// connection's next large reply waits for an earlier one to be written,
// so a connection that stops reading costs one large reply.
type connReplies struct {
	mu      sync.Mutex
	held    int64
	changed chan struct{} // closed and replaced when held drops
	src     *Source       // the connection's source's share; nil: none
	big     bool          // its large replies are encoded in the big slots
}

type connRepliesKey struct{}

// WithConnection returns ctx carrying a new connection's share of the
// reply budget, and its source's (src, from NewSource, shared by the
// connections of one client address; nil: none). An engine that
// multiplexes requests on a connection (HTTP/3, h2) calls it for each new
// connection and passes the connection's request contexts in
// Request.Context. Its large replies are encoded in the big slots
// (Server.bigSlots): HTTP/3's, where a client that never reads costs the
// server an encoding and nothing of its own.
func WithConnection(ctx context.Context, src *Source) context.Context {
	return context.WithValue(ctx, connRepliesKey{}, &connReplies{changed: make(chan struct{}), src: src, big: true})
}

// WithTCPConnection is WithConnection for a net/http connection (HTTP/1.1,
// h2): the shares, and the ordinary slots (the big ones cost 18-26% of the
// large lists a 2-CPU server encodes a second over HTTP/1.1).
func WithTCPConnection(ctx context.Context, src *Source) context.Context {
	return context.WithValue(ctx, connRepliesKey{}, &connReplies{changed: make(chan struct{}), src: src})
}

func connOf(ctx context.Context) *connReplies {
	if ctx == nil {
		return nil
	}
	c, _ := ctx.Value(connRepliesKey{}).(*connReplies)
	return c
}

// reserve takes the bytes of a reply of the route whose last reply was
// last's (a route with no reply yet: the whole share, until its first
// tells) from the connection's share, waiting while earlier replies hold
// too much of it (a reply alone always fits), counted in waiting
// meanwhile. It returns the bytes taken and whether it waited, or ctx's
// error if the client went first.
func (c *connReplies) reserve(ctx context.Context, last *atomic.Int64, share int64, waiting *atomic.Int64) (n int64, waited bool, err error) {
	waited, err = waitUntil(ctx, &c.mu, &c.changed, waiting, func() bool {
		n = expected(last, share)
		if c.held == 0 || c.held+n <= share {
			c.held += n
			return true
		}
		return false
	})
	if err != nil {
		return 0, waited, err
	}
	return n, waited, nil
}

// expected is what a reply of the route whose last reply was last's will
// likely hold: that size, or share while the route has none yet.
func expected(last *atomic.Int64, share int64) int64 {
	if n := last.Load(); n > 0 {
		return n
	}
	return share
}

// waitUntil is the wait of the connection's and the source's shares: it
// calls try with mu held until it reports true, waiting between tries
// for *changed to be closed (its owner closes and replaces it, under mu,
// when what try checks may have changed), counted in waiting meanwhile.
// It reports whether it waited, and ctx's error if the client went first.
func waitUntil(ctx context.Context, mu *sync.Mutex, changed *chan struct{}, waiting *atomic.Int64, try func() bool) (waited bool, err error) {
	for {
		mu.Lock()
		if try() {
			mu.Unlock()
			return waited, nil
		}
		ch := *changed
		mu.Unlock()
		if !waited {
			waited = true
			waiting.Add(1)
			defer waiting.Add(-1)
		}
		select {
		case <-ch:
		case <-ctx.Done():
			return waited, ctx.Err()
		}
	}
}

// adjust replaces a reservation of old bytes by one of now (the reply's
// size, once encoded); waiters re-check when it shrinks.
func (c *connReplies) adjust(old, now int64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.held += now - old
	if now < old {
		close(c.changed)
		c.changed = make(chan struct{})
	}
}

func (c *connReplies) release(n int64) { c.adjust(n, 0) }
