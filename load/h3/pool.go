package h3

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/quic-go/quic-go"
	"github.com/quic-go/quic-go/http3"
	"github.com/quic-go/quic-go/qlogwriter"

	"github.com/wirebench/wirebench/load/clientio"
	"github.com/wirebench/wirebench/measure"
	"github.com/wirebench/wirebench/results"
)

// DefaultDialTimeout bounds a handshake when the run sets no timeout.
const DefaultDialTimeout = 30 * time.Second

// ErrClosed is a request on a closed Pool.
var ErrClosed = errors.New("h3: pool closed")

// Pool is a fixed set of HTTP/3 connections shared by all VUs, VU i on
// connection i mod n: the connection count is explicit and the streams
// per connection are VUs / n (a request past the server's stream limit
// waits for a stream on its connection; it never opens another).
type Pool struct {
	slots []*slot
	// timeout is per request (clientio.Timed): 0, none.
	timeout time.Duration
	// Bytes is the UDP payload of every datagram of every connection.
	Bytes measure.Bytes
	// Layers splits Bytes by layer (layers.go).
	Layers LayerCounts

	noLayers   bool     // no trace, no split (NoLayers)
	zero       *zeroRTT // nil: 1-RTT only (zerortt.go)
	warmErr    error    // with 0-RTT, why Warm got no ticket
	mu         sync.Mutex
	handshakes []time.Duration
	// wrapTrace, set by tests only, wraps each connection's trace.
	wrapTrace func(qlogwriter.Trace) qlogwriter.Trace
}

// tracer is the quic.Config.Tracer of the connection on socket cc.
func (p *Pool) tracer(cc *countConn) func(context.Context, bool, quic.ConnectionID) qlogwriter.Trace {
	return func(context.Context, bool, quic.ConnectionID) qlogwriter.Trace {
		t := p.Layers.newTrace(cc)
		if p.wrapTrace != nil {
			return p.wrapTrace(t)
		}
		return t
	}
}

// NewPool prepares conns connections to addr (host:port), dialed on first
// use. tlsCfg must be set (QUIC is always encrypted); its NextProtos are
// replaced by h3.
func NewPool(conns int, addr string, timeout time.Duration, tlsCfg *tls.Config) *Pool {
	if conns <= 0 {
		conns = 1
	}
	dialTimeout := timeout
	if dialTimeout <= 0 {
		dialTimeout = DefaultDialTimeout
	}
	cfg := tlsCfg.Clone()
	cfg.NextProtos = []string{http3.NextProtoH3}
	if cfg.ServerName == "" {
		cfg.ServerName, _, _ = net.SplitHostPort(addr)
	}
	p := &Pool{slots: make([]*slot, conns), timeout: max(timeout, 0)}
	for i := range p.slots {
		p.slots[i] = &slot{p: p, addr: addr, tls: cfg, timeout: dialTimeout}
	}
	return p
}

// NoLayers leaves the split by layer out (call it before the first
// request): the connections get no trace, so quic-go builds none of its
// qlog events, and Finish puts no Layers in the result. Bytes are counted
// all the same.
func (p *Pool) NoLayers() { p.noLayers = true }

// CheckLayers counts the split from quic-go's packet events too (call it
// before the first request), so that Finish warns when its layers do not
// add up exactly (layers.go). It costs the client what those events do:
// quic-go builds one per packet and per ACK.
func (p *Pool) CheckLayers() { p.Layers.packets = true }

// Client is a client for VU vu, on its connection (vu mod n), each
// request bounded by the pool's timeout, up to the end of its body (a
// timeout fails as ErrTimeout). A VU keeps its client and sends one
// request at a time on it: that is the cheap case (clientio.Timed); requests
// sent at once on one client are each bounded too.
func (p *Pool) Client(vu int) *http.Client {
	return clientio.NewClient(&vuConn{s: p.slots[vu%len(p.slots)]}, p.timeout)
}

// Handshakes is the time each QUIC handshake took (dial to handshake
// complete), in the order they completed: one per connection, more if a
// connection was dialed again after the server closed it.
func (p *Pool) Handshakes() []time.Duration {
	if z := p.ZeroRTT(); z != nil { // zerortt.go
		return append(slices.Clone(z.Full), z.Resumed...)
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	return slices.Clone(p.handshakes)
}

// Warm dials every connection at once and waits for them (or ctx), so
// that handshakes happen before the run, timed apart from its requests. A
// failed dial is not an error here: the requests that need the connection
// dial again, and fail, counted. When no connection's handshake completed
// it returns why, so that a run can say so rather than count requests
// that wait out their timeout on a port where nothing answers.
func (p *Pool) Warm(ctx context.Context) error {
	if p.zero != nil { // zerortt.go: only the ticket; each connection dials at its first request
		if err := p.warmTicket(ctx); err != nil {
			p.mu.Lock()
			p.warmErr = err
			p.mu.Unlock()
		}
		return nil
	}
	var wg sync.WaitGroup
	errs := make([]error, len(p.slots))
	for i, s := range p.slots {
		wg.Go(func() { _, errs[i] = s.get(ctx) })
	}
	wg.Wait()
	for _, err := range errs {
		if err == nil || ctx.Err() != nil {
			return nil
		}
	}
	return fmt.Errorf("%w: %v", ErrNoHandshake, errs[0])
}

// ErrNoHandshake is Warm's error when no connection's QUIC handshake
// completed: nothing answers on the UDP port, or the handshake was
// refused.
var ErrNoHandshake = errors.New("no QUIC handshake completed")

// Close closes every connection (CONNECTION_CLOSE, counted in Bytes) and
// its socket. A request after Close dials again.
func (p *Pool) Close() error {
	var errs []error
	for _, s := range p.slots {
		errs = append(errs, s.close())
	}
	if p.zero != nil {
		p.zero.wait(time.Second) // every connection is closed: they end at once
	}
	return errors.Join(errs...)
}

// slot is one connection of a Pool, dialed again when it ends (idle
// timeout, GOAWAY, the server's restart). It is the http.Client's
// RoundTripper.
type slot struct {
	p       *Pool
	addr    string
	tls     *tls.Config
	timeout time.Duration

	mu      sync.Mutex
	c       *conn
	dialing *dial  // the dial under way, if any
	closes  uint64 // Close calls: a dial that outlives one is closed, not kept
	noEarly bool   // 0-RTT: the server rejected early data once; dial 1-RTT
}

// conn is one QUIC connection on its own UDP socket.
type conn struct {
	udp   *net.UDPConn
	count *countConn
	tr    *quic.Transport
	qc    *quic.Conn
	cc    *http3.ClientConn
	dead  bool // GOAWAY or a failure: the next request dials again
	// zerortt.go. dialedEarly: dialed with DialEarly (set before the conn
	// is shared); early: and its handshake not complete when DialEarly
	// returned, so it offered early data; rejected: the server rejected
	// its early data (its streams were reset; s.mu); class: how z counted
	// it (z.mu).
	dialedEarly, early, rejected bool
	class                        connClass
}

type dial struct {
	done chan struct{}
	c    *conn
	err  error
}

// RoundTrip implements http.RoundTripper.
func (s *slot) RoundTrip(req *http.Request) (*http.Response, error) {
	return s.roundTrip(req, nil)
}

// roundTrip sends req on the slot's connection; v, if not nil, is the
// VU's client it came through (exchange.go).
func (s *slot) roundTrip(req *http.Request, v *vuConn) (*http.Response, error) {
	c, err := s.get(req.Context())
	if err != nil {
		return nil, err
	}
	if s.p.zero != nil { // zerortt.go
		return s.p.zero.roundTrip(s, c, req)
	}
	resp, err := c.exchange(req, v)
	// The connection ended, or the server sent GOAWAY (http3 keeps that
	// error unexported: its text is all there is): the next request dials.
	if err != nil && (c.qc.Context().Err() != nil || strings.Contains(err.Error(), "connection in graceful shutdown")) {
		s.markDead(c)
	}
	return resp, err
}

// get returns the slot's live connection, dialing one if there is none;
// every request waiting shares the one dial, bounded by the timeout and
// by each request's own context.
func (s *slot) get(ctx context.Context) (*conn, error) {
	s.mu.Lock()
	if c := s.c; c != nil && !c.dead && c.qc.Context().Err() == nil {
		s.mu.Unlock()
		return c, nil
	}
	d := s.dialing
	if d == nil {
		d = &dial{done: make(chan struct{})}
		s.dialing = d
		go s.finishDial(d, s.closes)
	}
	s.mu.Unlock()
	select {
	case <-d.done:
		return d.c, d.err
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

func (s *slot) finishDial(d *dial, closes uint64) {
	ctx, cancel := context.WithTimeout(context.Background(), s.timeout)
	defer cancel()
	c, took, err := s.dial(ctx)
	s.mu.Lock()
	if err == nil && s.closes != closes { // the pool closed meanwhile
		c.close()
		c, err = nil, ErrClosed
	}
	old := s.c
	s.dialing, d.c, d.err = nil, c, err
	if err == nil {
		s.c = c
	}
	s.mu.Unlock()
	if err == nil {
		if old != nil {
			old.close() // ended already; frees its socket
		}
		if s.p.zero == nil { // with 0-RTT, watch times the handshake
			s.p.mu.Lock()
			s.p.handshakes = append(s.p.handshakes, took)
			s.p.mu.Unlock()
		}
	}
	close(d.done)
}

// dial opens a UDP socket, counted, and completes a QUIC handshake on it
// (1-RTT: no request goes before the handshake completes).
func (s *slot) dial(ctx context.Context) (*conn, time.Duration, error) {
	raddr, err := net.ResolveUDPAddr("udp", s.addr)
	if err != nil {
		return nil, 0, err
	}
	udp, err := net.ListenUDP("udp", nil)
	if err != nil {
		return nil, 0, err
	}
	cc := newCountConn(udp, &s.p.Bytes)
	cc.tear = &s.p.Layers.teardown
	tr := &quic.Transport{Conn: cc}
	start := time.Now()
	qcfg := &quic.Config{
		HandshakeIdleTimeout: s.timeout,
		MaxIdleTimeout:       max(s.timeout, 30*time.Second),
	}
	if !s.p.noLayers {
		qcfg.Tracer = s.p.tracer(cc)
	}
	var qc *quic.Conn
	s.mu.Lock()
	dialEarly := s.p.zero != nil && !s.noEarly
	s.mu.Unlock()
	if dialEarly { // zerortt.go: returns once 0-RTT keys are ready
		qc, err = tr.DialEarly(ctx, raddr, s.tls, qcfg)
	} else {
		qc, err = tr.Dial(ctx, raddr, s.tls, qcfg)
	}
	took := time.Since(start)
	if err != nil {
		tr.Close()
		udp.Close()
		return nil, 0, fmt.Errorf("%s: QUIC handshake: %w", s.addr, err)
	}
	if t := cc.trace.Load(); t != nil {
		t.h3.Store(true) // quic-go's producer was added; http3's comes next
	}
	c := &conn{udp: udp, count: cc, tr: tr, qc: qc, cc: newClientConn(qc), dialedEarly: dialEarly}
	if s.p.zero != nil {
		s.p.zero.watch(c, start)
	}
	return c, took, nil
}

func newClientConn(qc *quic.Conn) *http3.ClientConn {
	h3t := &http3.Transport{DisableCompression: true, MaxResponseHeaderBytes: clientio.MaxHead}
	return h3t.NewClientConn(qc)
}

func (s *slot) markDead(c *conn) {
	s.mu.Lock()
	c.dead = true
	s.mu.Unlock()
}

func (s *slot) close() error {
	s.mu.Lock()
	c := s.c
	s.c = nil
	s.closes++
	s.mu.Unlock()
	if c == nil {
		return nil
	}
	return c.close()
}

func (c *conn) close() error {
	// The server's control stream is read by a goroutine of http3's: let
	// it parse the SETTINGS first (they come with the first reply), or
	// their bytes would be carried but not framed (layers.go).
	if c.cc != nil && !c.rejected && c.qc.Context().Err() == nil {
		select {
		case <-c.cc.ReceivedSettings():
		case <-c.qc.Context().Done():
		case <-time.After(time.Second):
		}
	}
	c.count.markClosing() // from here on, quic-go may discard what it reads unlogged
	err := c.qc.CloseWithError(0, "")
	return errors.Join(err, c.tr.Close(), c.udp.Close())
}

// CloseIdleConnections is http.Client's: the connection stays (the VUs
// sharing it close one by one; Pool.Close ends it).
func (s *slot) CloseIdleConnections() {}

// LayersNow is the split of Bytes by layer so far, per direction.
func (p *Pool) LayersNow() (in, out results.Layers) {
	return p.Layers.Layers(p.Bytes.In.Load(), p.Bytes.Out.Load())
}

// Finish puts the pool's split into res (call it after Close) and warns
// if its layers do not add up (exactly, with CheckLayers); with NoLayers,
// nothing.
func (p *Pool) Finish(res *results.Load) {
	if p.noLayers {
		return
	}
	in, out := p.LayersNow()
	res.Layers = &results.Split{In: in, Out: out}
	if err := p.Layers.Check(p.Bytes.In.Load(), p.Bytes.Out.Load()); err != nil {
		res.Warnings = append(res.Warnings, err.Error())
	}
}
