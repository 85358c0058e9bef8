package load

import (
	"bufio"
	"context"
	"errors"
	"io"
	"net"
	"syscall"
	"time"

	"github.com/wirebench/wirebench/measure"
)

// h1Conn is the lean HTTP/1.1 client: one keep-alive connection owned by
// one VU, requests written as pre-serialized bytes in one write, responses
// read by parseResponse from a reused buffer. It allocates nothing per
// request in the steady state, which is how it stays cheaper per request
// than wrk (see bench/wrk-vs-wirebench.sh).
//
// Not safe for concurrent use.
type h1Conn struct {
	addr      string
	dialer    *net.Dialer
	wire      *measure.Bytes
	timeout   time.Duration
	keepAlive bool

	conn     net.Conn // counts written bytes
	deadline time.Time
	fr       *fdReader
	br       *bufio.Reader
	stopWake func() bool
	resp     h1Response
	body     []byte
	reused   bool // a response was read on this connection before
	// wasReused: the exchange in progress went out on a reused connection
	wasReused bool
}

func newH1Conn(addr string, wire *measure.Bytes, timeout time.Duration, keepAlive bool) *h1Conn {
	return &h1Conn{
		addr: addr, dialer: &net.Dialer{Timeout: timeout}, wire: wire,
		timeout: timeout, keepAlive: keepAlive,
	}
}

// wake is a deadline in the past: it makes a blocked read or write
// return at once when the run's context ends.
var wake = time.Unix(1, 0)

// roundTrip sends req and reads the response, redialling first if the
// previous exchange closed the connection. The response is valid until
// the next call.
//
// A request sent on a reused keep-alive connection that the server closed
// before any byte of the response is sent again, once, on a new
// connection (see h1Loop.broken for why); other failures are the
// request's.
func (c *h1Conn) roundTrip(ctx context.Context, req []byte, noBody, discard bool) (*h1Response, error) {
	resp, err := c.try(ctx, req, noBody, discard)
	if err != nil && c.retryable(err) {
		resp, err = c.try(ctx, req, noBody, discard)
	}
	if err != nil && errors.Is(err, io.ErrUnexpectedEOF) {
		if c.fr != nil && c.fr.got > 0 {
			return nil, errClosedDuring
		}
		return nil, errClosedBefore
	}
	return resp, err
}

// retryable reports whether the failed exchange may be sent again: the
// connection was reused and nothing of the response arrived.
func (c *h1Conn) retryable(err error) bool {
	return c.wasReused && c.fr != nil && c.fr.got == 0 && isClosedErr(err)
}

func (c *h1Conn) try(ctx context.Context, req []byte, noBody, discard bool) (*h1Response, error) {
	c.wasReused = false
	if c.conn == nil {
		if err := c.connect(ctx); err != nil {
			return nil, err
		}
	}
	c.wasReused, c.reused = c.reused, false
	c.fr.got = 0
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
		c.close()
		return nil, err
	}
	if c.br.Buffered() == 0 {
		c.fr.sendWithNextRead(req) // written by the parser's first read
	} else if _, err := c.conn.Write(req); err != nil { // the server sent more than asked: stay correct
		c.close()
		return nil, err
	}
	var err error
	c.body, err = parseResponse(c.br, &c.resp, c.body, discard, noBody)
	if err != nil || c.resp.Close || !c.keepAlive {
		c.close()
	} else {
		c.reused = true
	}
	if err != nil {
		return nil, err
	}
	return &c.resp, nil
}

func (c *h1Conn) connect(ctx context.Context) error {
	conn, err := c.dialer.DialContext(ctx, "tcp", c.addr)
	if err != nil {
		return err
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
	c.fr = newFDReader(rc, c.wire)
	if c.br == nil {
		c.br = bufio.NewReaderSize(c.fr, 32<<10)
	} else {
		c.br.Reset(c.fr)
	}
	// When ctx ends, a read blocked on a stalled server returns at once.
	// roundTrip checks ctx after each SetDeadline, so a deadline set just
	// after this fires cannot hide the cancellation.
	c.stopWake = context.AfterFunc(ctx, func() { conn.SetDeadline(wake) })
	return nil
}

func (c *h1Conn) close() {
	if c.conn == nil {
		return
	}
	c.stopWake()
	c.conn.Close()
	c.conn = nil
}
