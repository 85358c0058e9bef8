//lint:file-ignore SA1019 x/net's HTTP/2 client is deprecated for net/http's, whose connections hide the bytes after TLS, which this pool parses; x/net keeps ConnPool and NewClientConn working over net/http from Go 1.27.

package h2

import (
	"context"
	"crypto/tls"
	"fmt"
	"net"
	"net/http"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/wirebench/wirebench/load/clientio"
	"github.com/wirebench/wirebench/load/wire"
	"github.com/wirebench/wirebench/measure"
	"github.com/wirebench/wirebench/results"
	"golang.org/x/net/http2"
)

// Pool is a fixed set of HTTP/2 connections (h2c, or h2 over TLS when
// tlsCfg is set) shared by all VUs, VU i using connection i mod n: the
// connection count is explicit and streams per connection = VUs / n.
//
// It runs x/net's HTTP/2 client connections rather than net/http's
// Transport, for two things the Transport hides: the connection (a
// request past the server's stream limit opened another one: 2 for
// --conns 1 against nginx's 128 streams), and the bytes after TLS, where
// the DATA frames say how much of a body went out — a transport reads up
// to 512 KiB of a body ahead of its flow-control window, so counting its
// reads overcounts a body the server answered early and reset (11.76 GiB
// of body in 1.48 GiB of wire against nginx's 413s).
type Pool struct {
	timeout time.Duration // per request, kept by each VU's clientio.Timed
	slots   []*h2Slot
	Bytes   measure.Bytes // on the sockets (TLS records included)
	layers  wire.Counter  // in the HTTP/2 frames
}

func NewPool(conns int, timeout time.Duration, tlsCfg *tls.Config) *Pool {
	if conns <= 0 {
		conns = 1
	}
	p := &Pool{timeout: timeout, slots: make([]*h2Slot, conns)}
	dialTimeout := timeout
	if dialTimeout <= 0 { // no request timeout: a dial still ends
		dialTimeout = defaultH2DialTimeout
	}
	d := &net.Dialer{Timeout: dialTimeout}
	for i := range p.slots {
		slot := &h2Slot{timeout: dialTimeout, dial: func(ctx context.Context, addr string) (net.Conn, error) {
			return p.dial(ctx, d, addr, tlsCfg)
		}}
		slot.t = &http2.Transport{
			AllowHTTP:          tlsCfg == nil,
			DisableCompression: true,
			MaxHeaderListSize:  clientio.MaxHead, // as the lean client: a server's head is refused past it
			// Requests past the server's stream limit wait for a stream
			// on the slot's connection instead of opening another.
			StrictMaxConcurrentStreams: true,
			ConnPool:                   slot,
		}
		p.slots[i] = slot
	}
	return p
}

// dial opens one connection: TCP counted into p.bytes, TLS over it if
// cfg is set (it must agree on h2), and the HTTP/2 frames parsed above.
func (p *Pool) dial(ctx context.Context, d *net.Dialer, addr string, cfg *tls.Config) (net.Conn, error) {
	c, err := d.DialContext(ctx, "tcp", addr)
	if err != nil {
		return nil, err
	}
	if cfg == nil {
		return wire.Conn(c, wire.StackH2, &p.layers, &p.Bytes), nil
	}
	cfg = cfg.Clone()
	if cfg.ServerName == "" {
		cfg.ServerName, _, _ = net.SplitHostPort(addr)
	}
	tc := tls.Client(measure.CountConn(c, &p.Bytes), cfg)
	if err := tc.HandshakeContext(ctx); err != nil {
		c.Close()
		return nil, err
	}
	if proto := tc.ConnectionState().NegotiatedProtocol; proto != http2.NextProtoTLS {
		tc.Close()
		return nil, fmt.Errorf("%s: TLS agreed on %q, not h2: the server does not offer HTTP/2", addr, proto)
	}
	return wire.Conn(tc, wire.StackH2, &p.layers, nil), nil
}

// defaultH2DialTimeout bounds a dial (TCP and TLS) when the run sets no
// timeout.
const defaultH2DialTimeout = 30 * time.Second

// h2Slot is one connection of an h2Pool, dialed again when the server
// ends it (GOAWAY, close). It is the transport's connection pool, and
// does not reserve streams as x/net's does: with
// StrictMaxConcurrentStreams, reservations of requests queued behind the
// server's stream limit count as open streams, and the connection stalls
// for good (golang/go#70809; 200 VUs on one connection to nginx stopped
// after 1,125 requests).
type h2Slot struct {
	t       *http2.Transport
	dial    func(ctx context.Context, addr string) (net.Conn, error)
	timeout time.Duration // of a dial, the TLS handshake included

	// requests and connection lookups: the transport looks once more
	// for each time it sends a request again
	trips, gets atomic.Int64

	mu      sync.Mutex
	cc      *http2.ClientConn
	dialing *h2Dial             // the dial under way, if any
	all     []*http2.ClientConn // every connection not known closed
}

type h2Dial struct {
	done chan struct{}
	err  error
}

// RoundTrip implements http.RoundTripper (the transport's retries
// included: a request the server refused with GOAWAY goes again on the
// next connection).
func (s *h2Slot) RoundTrip(req *http.Request) (*http.Response, error) {
	s.trips.Add(1)
	return s.t.RoundTrip(req)
}

// GetClientConn implements http2.ClientConnPool: the slot's connection,
// or a new one if it cannot take requests any more.
func (s *h2Slot) GetClientConn(req *http.Request, addr string) (*http2.ClientConn, error) {
	s.gets.Add(1)
	for {
		s.mu.Lock()
		if s.cc != nil && s.cc.CanTakeNewRequest() {
			cc := s.cc
			s.mu.Unlock()
			return cc, nil
		}
		d := s.dialing
		if d == nil {
			// One dial for every request waiting, bounded by the
			// timeout and by no request's context: each waits for it
			// or its own end.
			d = &h2Dial{done: make(chan struct{})}
			s.dialing = d
			go s.finishDial(d, addr)
		}
		s.mu.Unlock()
		select {
		case <-d.done:
			if d.err != nil {
				return nil, d.err
			}
		case <-req.Context().Done():
			return nil, req.Context().Err()
		}
	}
}

func (s *h2Slot) finishDial(d *h2Dial, addr string) {
	ctx, cancel := context.WithTimeout(context.Background(), s.timeout)
	defer cancel()
	cc, err := s.newConn(ctx, addr)
	s.mu.Lock()
	defer s.mu.Unlock()
	s.dialing, d.err = nil, err
	if err == nil {
		s.cc = cc
		s.all = append(slices.DeleteFunc(s.all, func(c *http2.ClientConn) bool { return c.State().Closed }), cc)
	}
	close(d.done)
}

func (s *h2Slot) newConn(ctx context.Context, addr string) (*http2.ClientConn, error) {
	c, err := s.dial(ctx, addr) // TCP and TLS, bounded by ctx
	if err != nil {
		return nil, err
	}
	cc, err := s.t.NewClientConn(c)
	if err != nil {
		c.Close()
		return nil, err
	}
	// No request before the server's SETTINGS: until they arrive the
	// client allows 100 streams, and a stream the server's lower limit
	// refuses after the client acknowledged them is a PROTOCOL_ERROR that
	// fails its request (1 in 400 at a limit of 4 under -race). The PING's
	// answer comes after the SETTINGS the server sent first.
	if err := cc.Ping(ctx); err != nil {
		cc.Close()
		return nil, fmt.Errorf("%s: no answer to an HTTP/2 PING: %w", addr, err)
	}
	return cc, nil
}

// MarkDead implements http2.ClientConnPool.
func (s *h2Slot) MarkDead(cc *http2.ClientConn) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.cc == cc {
		s.cc = nil
	}
}

// CloseIdleConnections closes the slot's connections that carry no
// stream (http.Client.CloseIdleConnections calls it).
func (s *h2Slot) CloseIdleConnections() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.all = slices.DeleteFunc(s.all, func(c *http2.ClientConn) bool {
		if st := c.State(); st.Closed || st.StreamsActive == 0 && st.StreamsPending == 0 {
			c.Close()
			if s.cc == c {
				s.cc = nil
			}
			return true
		}
		return false
	})
}

// BodyOut is the request body bytes the connections sent: the payload of
// their DATA frames.
func (p *Pool) BodyOut() int64 { return p.layers.Out().Message }

// Resent is how many requests the transport sent again, on a new
// connection or after a pause, because the server refused them
// unprocessed (GOAWAY past their stream, REFUSED_STREAM).
func (p *Pool) Resent() int64 {
	var n int64
	for _, s := range p.slots {
		n += s.gets.Load() - s.trips.Load()
	}
	return n
}

// Client is a client for VU vu, on its connection (vu mod n), each
// request bounded by the pool's timeout up to the end of its body, kept
// by clientio.Timed rather than http.Client.Timeout (a goroutine, a timer
// and two channels a request, net/http's setRequestCancel, for a
// RoundTripper it does not know). A VU keeps its client and sends one
// request at a time on it: that is Timed's cheap case. Redirects are
// responses, not followed (clientio.NoRedirect).
func (p *Pool) Client(vu int) *http.Client {
	return clientio.NewClient(p.slots[vu%len(p.slots)], p.timeout)
}

// ResentWarning tells the reader of res that n HTTP/2 requests were sent
// again (Pool.Resent), if any.
func ResentWarning(res *results.Load, n int64) {
	if n > 0 {
		res.Warnings = append(res.Warnings, fmt.Sprintf("%d HTTP/2 requests were sent again: the server refused them unprocessed (GOAWAY past their stream, REFUSED_STREAM; not counted as failures)", n))
	}
}
