package h1

import (
	"bufio"
	"context"
	"crypto/tls"
	"errors"
	"io"
	"net"
	"sync"
	"syscall"
	"time"

	"github.com/wirebench/wirebench/load/clientio"
	"github.com/wirebench/wirebench/measure"
)

// Conn is the lean HTTP/1.1 client: one keep-alive connection owned by
// one VU, requests written as pre-serialized bytes in one write, responses
// read by ParseResponse from a reused buffer. It allocates nothing per
// request in the steady state, which is how it stays cheaper per request
// than wrk (see bench/wrk-vs-wirebench.sh).
//
// Not safe for concurrent use.
type Conn struct {
	Addr      string
	dialer    *net.Dialer
	wire      *measure.Bytes
	timeout   time.Duration
	KeepAlive bool
	TLS       *tls.Config // https: HTTP/1.1 over TLS, read through crypto/tls

	conn     net.Conn // counts written bytes
	deadline time.Time
	fr       *fdReader             // plain TCP
	tr       *clientio.CountReader // TLS
	// br: over TLS the connection's own; over plain TCP taken from
	// readers once the response's first bytes are in first, and given
	// back when the response has been parsed (see try)
	br       *bufio.Reader
	first    prefixReader
	stopWake func() bool
	Resp     Response
	body     []byte
	reused   bool // a response was read on this connection before
	// sent is how much of the last request was written (all of it unless
	// the server answered before its end and hung up)
	Sent int
	// LocalPort is the client's port of the current connection (0 before
	// the first dial): the run names a slow request's connection by it.
	LocalPort int
	// wasReused: the exchange in progress went out on a reused connection
	wasReused bool
}

func NewConn(addr string, wire *measure.Bytes, timeout time.Duration, keepAlive bool) *Conn {
	return &Conn{
		Addr: addr, dialer: &net.Dialer{Timeout: timeout}, wire: wire,
		timeout: timeout, KeepAlive: keepAlive,
	}
}

// RoundTrip sends req and reads the response, redialling first if the
// previous exchange closed the connection. The response is valid until
// the next call.
//
// A request sent on a reused keep-alive connection that the server closed
// before any byte of the response is sent again, once, on a new
// connection (see h1Loop.broken for why); other failures are the
// request's.
func (c *Conn) RoundTrip(ctx context.Context, req []byte, noBody, discard bool) (*Response, error) {
	resp, err := c.try(ctx, req, noBody, discard)
	if err != nil && c.retryable(err) {
		resp, err = c.try(ctx, req, noBody, discard)
	}
	if err != nil && errors.Is(err, io.ErrUnexpectedEOF) {
		if c.got() > 0 {
			return nil, clientio.ErrClosedDuring
		}
		return nil, clientio.ErrClosedBefore
	}
	return resp, err
}

// retryable reports whether the failed exchange may be sent again: the
// connection was reused and nothing of the response arrived.
// Release gives the last response's body back to the pool it came from
// when it is large: the caller is done with the response, which is no
// longer valid. Without it the buffer goes back only when the next
// request starts, and a VU idle between arrivals holds it meanwhile: at
// -c 5000 in open loop, 5,000 idle list bodies of 32 KiB.
func (c *Conn) Release() {
	if cap(c.body) > keepBody {
		putBody(c.body)
		c.body = nil
		c.Resp.Body = nil
	}
}

func (c *Conn) retryable(err error) bool {
	return c.wasReused && c.got() == 0 && clientio.IsClosed(err)
}

func (c *Conn) try(ctx context.Context, req []byte, noBody, discard bool) (*Response, error) {
	c.wasReused, c.Sent = false, 0
	if c.conn == nil {
		if err := c.connect(ctx); err != nil {
			return nil, err
		}
	}
	c.wasReused, c.reused = c.reused, false
	c.resetGot()
	if c.timeout > 0 {
		// Re-arming the deadline moves two runtime timers; doing it only
		// when less than 90% of the timeout is left saves that per request
		// at the price of a timeout anywhere in [0.9·t, t].
		if now := time.Now(); c.deadline.Sub(now) < c.timeout*9/10 {
			c.deadline = now.Add(c.timeout)
			c.conn.SetDeadline(c.deadline)
		}
	}
	if err := ctx.Err(); err != nil { // after SetDeadline: see connect
		c.Close()
		return nil, err
	}
	if cap(c.body) > keepBody { // the last response is no longer the caller's
		putBody(c.body)
		c.body = nil
	}
	var werr error // see fdReader.werr
	viaRead := c.fr != nil && (c.br == nil || c.br.Buffered() == 0)
	if viaRead {
		c.fr.sendWithNextRead(req) // written by the next read
		if c.br == nil {
			// Wait for the response in a small buffer of the connection's
			// own, then parse it through a pooled reader: a connection
			// waiting for its server holds 2 KiB, not 32, so the client's
			// memory follows the responses in hand, not the connections.
			k, err := c.fr.Read(c.first.buf[:])
			c.first.b, c.first.err, c.first.r = c.first.buf[:k], err, c.fr
			c.br = readers.Get().(*bufio.Reader)
			c.br.Reset(&c.first)
		}
	} else {
		// The server sent more than asked (stay correct), or TLS. A failed
		// write may still have a response behind it (see fdReader.werr).
		c.Sent, werr = c.conn.Write(req)
	}
	var err error
	c.body, err = ParseResponse(c.br, &c.Resp, c.body, discard, noBody)
	cut := false
	if viaRead {
		cut = c.fr.settle()
		c.Sent, werr = c.fr.wrote, c.fr.werr
	}
	if c.fr != nil && c.br.Buffered() == 0 {
		c.putReader()
	}
	if err != nil || c.Resp.Close || !c.KeepAlive || cut || werr != nil {
		c.Close()
	} else {
		c.reused = true
	}
	switch {
	case err != nil && werr != nil && c.got() == 0:
		return nil, werr
	case err != nil:
		return nil, err
	}
	return &c.Resp, nil
}

func (c *Conn) connect(ctx context.Context) error {
	conn, err := c.dialer.DialContext(ctx, "tcp", c.Addr)
	if err != nil {
		return err
	}
	if a, ok := conn.LocalAddr().(*net.TCPAddr); ok {
		c.LocalPort = a.Port
	}
	if c.TLS != nil {
		return c.handshake(ctx, conn)
	}
	sc, ok := conn.(syscall.Conn)
	if !ok {
		conn.Close()
		return errNoRawConn
	}
	rc, err := sc.SyscallConn()
	if err != nil {
		conn.Close()
		return err
	}
	c.conn = measure.CountConn(conn, c.wire)
	c.deadline = time.Time{}
	// A write deadline in the past ends a writer the response overtook.
	c.fr, c.tr = newFDReader(rc, c.wire, func() { conn.SetWriteDeadline(time.Unix(1, 0)) }), nil
	c.putReader() // bytes left over from the last connection are not this one's
	// When ctx ends, a read blocked on a stalled server returns at once.
	// roundTrip checks ctx after each SetDeadline, so a deadline set just
	// after this fires cannot hide the cancellation.
	c.stopWake = context.AfterFunc(ctx, func() { conn.SetDeadline(clientio.Wake) })
	return nil
}

func (c *Conn) Close() {
	if c.conn == nil {
		return
	}
	if c.fr != nil {
		c.putReader()
	}
	c.stopWake()
	c.conn.Close()
	c.conn = nil
}

// handshake runs TLS over conn, counted below TLS so that records count
// as framing, and reads through crypto/tls instead of fdReader.
func (c *Conn) handshake(ctx context.Context, conn net.Conn) error {
	tc := tls.Client(measure.CountConn(conn, c.wire), c.TLS)
	if c.timeout > 0 {
		c.deadline = time.Now().Add(c.timeout)
		conn.SetDeadline(c.deadline)
	}
	if err := tc.HandshakeContext(ctx); err != nil {
		conn.Close()
		return err
	}
	c.conn, c.fr, c.tr = tc, nil, &clientio.CountReader{R: tc}
	if c.br == nil {
		c.br = bufio.NewReaderSize(c.tr, 32<<10)
	} else {
		c.br.Reset(c.tr)
	}
	c.stopWake = context.AfterFunc(ctx, func() { conn.SetDeadline(clientio.Wake) })
	return nil
}

// readers are the plain-TCP connections' response readers, shared: one
// is held only while a response is parsed. 32 KiB: the longest header
// line a response may have.
var readers = sync.Pool{New: func() any { return bufio.NewReaderSize(nil, 32<<10) }}

func (c *Conn) putReader() {
	if c.br == nil {
		return
	}
	c.br.Reset(nil)
	readers.Put(c.br)
	c.br = nil
	c.first.b, c.first.err, c.first.r = nil, nil, nil
}

// prefixReader yields the bytes (or the error) of the read that waited for
// a response, then reads on from r.
type prefixReader struct {
	buf [2 << 10]byte
	b   []byte
	err error
	r   io.Reader
}

func (p *prefixReader) Read(dst []byte) (int, error) {
	if len(p.b) > 0 {
		n := copy(dst, p.b)
		p.b = p.b[n:]
		return n, nil
	}
	if p.err != nil {
		err := p.err
		p.err = nil
		return 0, err
	}
	return p.r.Read(dst)
}

// got is how many bytes arrived since resetGot.
func (c *Conn) got() int {
	switch {
	case c.fr != nil:
		return c.fr.got
	case c.tr != nil:
		return c.tr.Got
	}
	return 0
}

func (c *Conn) resetGot() {
	if c.fr != nil {
		c.fr.got = 0
	}
	if c.tr != nil {
		c.tr.Got = 0
	}
}
