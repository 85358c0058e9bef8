package h3

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/quic-go/quic-go"
	"github.com/quic-go/quic-go/http3"
)

// 0-RTT (Enable0RTT, load --0rtt): the pool first makes one full
// handshake to get a session ticket (Warm), then dials each connection at
// its first request, resuming the session, and sends the requests that
// go before the handshake completes in 0-RTT packets (GET and HEAD only:
// http3 sends nothing else early, a replayed POST being unsafe). Each
// handshake is timed, full or resumed apart; a connection counts as 0-RTT
// when quic-go says the server accepted its early data.
//
// When the server refuses: with a ticket that allows no early data (the
// server does not accept 0-RTT) the connection is a resumed 1-RTT one
// and its requests wait for the handshake; when it rejects early data it
// had allowed, the requests sent early fail and go again on a connection
// dialed in 1-RTT (Refused counts the rejected connections).

// ZeroRTTStats are a 0-RTT pool's counts.
type ZeroRTTStats struct {
	Full    []time.Duration `json:"full_ns"`    // full handshakes (the ticket's, and any without resumption)
	Resumed []time.Duration `json:"resumed_ns"` // resumed handshakes, dial to complete
	// Used is the connections whose early data the server accepted;
	// EarlyRequests the requests sent before the handshake completed;
	// Refused the connections whose early data the server rejected (their
	// early requests sent again), and NoEarly the resumed connections that
	// could not send early data (the ticket allowed none).
	Used, EarlyRequests, Refused, NoEarly int64
	// NoTicket says why the pool got no session ticket (then every
	// connection makes a full handshake).
	NoTicket string `json:"no_ticket,omitempty"`
}

type zeroRTT struct {
	got                           chan struct{} // closed when a ticket arrived
	once                          sync.Once
	used, early, refused, noEarly atomic.Int64
	mu                            sync.Mutex
	full, resumed                 []time.Duration
	// watching is watch's goroutines: Pool.Close waits for them, so the
	// counts are whole once it returns.
	watching sync.WaitGroup
}

// ticketCache is a session cache that says when a ticket arrived.
type ticketCache struct {
	tls.ClientSessionCache
	z *zeroRTT
}

func (c ticketCache) Put(key string, cs *tls.ClientSessionState) {
	c.ClientSessionCache.Put(key, cs)
	if cs != nil {
		c.z.once.Do(func() { close(c.z.got) })
	}
}

// Enable0RTT makes the pool resume sessions and send early data. Call it
// before the pool's first use.
func (p *Pool) Enable0RTT() {
	z := &zeroRTT{got: make(chan struct{})}
	cfg := p.slots[0].tls.Clone()
	cfg.ClientSessionCache = ticketCache{tls.NewLRUClientSessionCache(16), z}
	for _, s := range p.slots {
		s.tls = cfg
	}
	p.zero = z
}

// ZeroRTT is the 0-RTT counts (nil without Enable0RTT).
func (p *Pool) ZeroRTT() *ZeroRTTStats {
	z := p.zero
	if z == nil {
		return nil
	}
	p.mu.Lock()
	var noTicket string
	if p.warmErr != nil {
		noTicket = p.warmErr.Error()
	}
	p.mu.Unlock()
	z.mu.Lock()
	defer z.mu.Unlock()
	return &ZeroRTTStats{Full: slices.Clone(z.full), Resumed: slices.Clone(z.resumed), NoTicket: noTicket,
		Used: z.used.Load(), EarlyRequests: z.early.Load(), Refused: z.refused.Load(), NoEarly: z.noEarly.Load()}
}

// warmTicket makes the full handshake whose session ticket the pool's
// connections resume, and closes it once the ticket arrived and both
// HTTP/3 control streams crossed (the server's SETTINGS parsed, ours
// carried by a packet: nothing unparsed, so the bytes by layer stay
// exact; nothing else runs during Warm).
func (p *Pool) warmTicket(ctx context.Context) error {
	s0 := p.slots[0] // its address and TLS configuration, not its connection
	s := &slot{p: p, addr: s0.addr, tls: s0.tls, timeout: s0.timeout}
	c, _, err := s.dial(ctx)
	if err != nil {
		return err
	}
	defer c.close()
	timeout := time.NewTimer(s.timeout)
	defer timeout.Stop()
	for _, ch := range []<-chan struct{}{p.zero.got, c.cc.ReceivedSettings()} {
		select {
		case <-ch:
		case <-ctx.Done():
			return ctx.Err()
		case <-timeout.C:
			return fmt.Errorf("%s: no session ticket or SETTINGS within %v", s.addr, s.timeout)
		}
	}
	for !p.noLayers && p.Layers.packets { // nothing counted when carried, nothing to wait for
		// http3 opens our control stream in a goroutine: wait until a
		// packet carried it (layers.go counts it then).
		if in, out := p.Layers.StreamMismatch(); in == 0 && out == 0 && p.Layers.out.h3Frames.Load() > 0 {
			return nil
		}
		select {
		case <-time.After(time.Millisecond):
		case <-ctx.Done():
			return ctx.Err()
		case <-timeout.C:
			return fmt.Errorf("%s: the control streams did not cross within %v", s.addr, s.timeout)
		}
	}
	return nil
}

// connClass is how a resumed connection counts: 0-RTT used, refused
// (its early data rejected) or no early data (the ticket allowed none).
type connClass int8

const (
	classNone connClass = iota
	classUsed
	classRefused
	classNoEarly
)

// watch times c's handshake and records how it went. c.early is set
// while the handshake is under way after DialEarly returned.
func (z *zeroRTT) watch(c *conn, start time.Time) {
	select {
	case <-c.qc.HandshakeComplete():
		// Done within DialEarly (the ticket allowed no early data), or
		// since it returned: a rejection, if any, shows at the first
		// request (reject).
		z.done(c, start)
		return
	default:
	}
	c.early = true
	z.watching.Go(func() {
		select {
		case <-c.qc.HandshakeComplete():
		case <-c.qc.Context().Done():
			// Both may be ready (a rejected connection is closed soon
			// after its handshake): the handshake decides.
			select {
			case <-c.qc.HandshakeComplete():
			default:
				return
			}
		}
		z.done(c, start)
	})
}

// wait waits for watch's goroutines (each ends with its connection, or
// its handshake), up to limit.
func (z *zeroRTT) wait(limit time.Duration) {
	done := make(chan struct{})
	go func() { z.watching.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(limit):
	}
}

func (z *zeroRTT) done(c *conn, start time.Time) {
	took := time.Since(start)
	st := c.qc.ConnectionState()
	z.mu.Lock()
	defer z.mu.Unlock()
	if !st.TLS.DidResume {
		z.full = append(z.full, took)
		return
	}
	z.resumed = append(z.resumed, took)
	switch {
	case st.Used0RTT:
		c.class = classUsed
		z.used.Add(1)
	case c.early || c.class == classRefused:
		c.class = classRefused
		z.refused.Add(1)
	default:
		c.class = classNoEarly
		z.noEarly.Add(1)
	}
}

// roundTrip sends req on c: early (0-RTT) while c's handshake is under
// way and the method allows it. If the server rejected c's early data,
// the request goes again, once, on a connection dialed in 1-RTT: a
// request sent early was discarded by the server with the 0-RTT packets
// that carried it, and one sent after the handshake was not sent at all
// (quic-go opens no stream on a rejected connection).
func (z *zeroRTT) roundTrip(s *slot, c *conn, req *http.Request) (*http.Response, error) {
	early := req
	select {
	case <-c.qc.HandshakeComplete():
	default:
		switch req.Method {
		case http.MethodGet, "":
			early = req.Clone(req.Context())
			early.Method = http3.MethodGet0RTT
		case http.MethodHead:
			early = req.Clone(req.Context())
			early.Method = http3.MethodHead0RTT
		}
	}
	if early != req {
		z.early.Add(1)
	}
	resp, err := c.cc.RoundTrip(early)
	if err == nil || !c.dialedEarly || !z.rejected(c, early != req, err, req) {
		if err != nil && c.qc.Context().Err() != nil {
			s.markDead(c)
		}
		return resp, err
	}
	// This connection is dropped and the request goes again on one dialed
	// in 1-RTT (resuming, no early data: this server rejected it once).
	// quic-go's NextConnection would keep the connection, but http3's
	// streams on it were reset by the server (H3_INCOMPLETE_REQUEST) when
	// tried here. A dial of the slot's that began before this one ended
	// may still offer early data and be rejected too: a request that
	// then fails before a stream opened goes once more.
	z.reject(s, c)
	for again := 0; ; again++ {
		c2, err := s.get(req.Context())
		if err != nil {
			return nil, fmt.Errorf("after 0-RTT was rejected: %w", err)
		}
		resp, err := c2.cc.RoundTrip(req)
		if err == nil || !c2.dialedEarly || again > 0 || !errors.Is(err, quic.Err0RTTRejected) {
			if err != nil && c2.qc.Context().Err() != nil {
				s.markDead(c2)
			}
			return resp, err
		}
		z.reject(s, c2)
	}
}

// rejected is whether a request on c, dialed for 0-RTT, failed because
// the server rejected c's early data: quic-go says so, or (http3 does not
// always pass its error on) the request went early and c's handshake
// completed without 0-RTT.
func (z *zeroRTT) rejected(c *conn, sentEarly bool, err error, req *http.Request) bool {
	if errors.Is(err, quic.Err0RTTRejected) {
		return true
	}
	if !sentEarly {
		return false
	}
	select {
	case <-c.qc.HandshakeComplete():
	case <-c.qc.Context().Done():
	case <-req.Context().Done():
	}
	// More than one may be ready (a rejected connection may be closed
	// already): only a completed handshake tells.
	select {
	case <-c.qc.HandshakeComplete():
		return !c.qc.ConnectionState().Used0RTT
	default:
		return false
	}
}

// reject marks c, whose early data the server rejected, dead; its slot
// dials in 1-RTT from now on, and c counts as refused (also when its
// handshake completed before watch looked, and it was counted as a
// connection without early data).
func (z *zeroRTT) reject(s *slot, c *conn) {
	s.mu.Lock()
	c.dead, c.rejected, s.noEarly = true, true, true
	s.mu.Unlock()
	z.mu.Lock()
	defer z.mu.Unlock()
	switch c.class {
	case classNoEarly:
		z.noEarly.Add(-1)
		z.refused.Add(1)
	case classNone: // done has not run yet: it counts c as refused
	default:
		return
	}
	c.class = classRefused
}
