package load

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"net"
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
	dial      measure.DialFunc // counts the connection's bytes
	timeout   time.Duration
	keepAlive bool

	conn     net.Conn
	br       *bufio.Reader
	stopWake func() bool
	resp     h1Response
	body     []byte
}

func newH1Conn(addr string, wire *measure.Bytes, timeout time.Duration, keepAlive bool) *h1Conn {
	d := &net.Dialer{Timeout: timeout}
	return &h1Conn{
		addr: addr, dial: measure.CountingDialer(d.DialContext, wire),
		timeout: timeout, keepAlive: keepAlive,
	}
}

// wake is a deadline in the past: it makes a blocked read or write
// return at once when the run's context ends.
var wake = time.Unix(1, 0)

// roundTrip sends req and reads the response, redialling first if the
// previous exchange closed the connection. The response is valid until
// the next call.
func (c *h1Conn) roundTrip(ctx context.Context, req []byte, noBody, discard bool) (*h1Response, error) {
	if c.conn == nil {
		if err := c.connect(ctx); err != nil {
			return nil, err
		}
	}
	if c.timeout > 0 {
		c.conn.SetDeadline(time.Now().Add(c.timeout))
	}
	if err := ctx.Err(); err != nil { // after SetDeadline: see connect
		c.close()
		return nil, err
	}
	if _, err := c.conn.Write(req); err != nil {
		c.close()
		return nil, err
	}
	var err error
	c.body, err = parseResponse(c.br, &c.resp, c.body, discard, noBody)
	if err != nil || c.resp.Close || !c.keepAlive {
		c.close()
	}
	if err != nil {
		return nil, err
	}
	return &c.resp, nil
}

func (c *h1Conn) connect(ctx context.Context) error {
	conn, err := c.dial(ctx, "tcp", c.addr)
	if err != nil {
		return err
	}
	c.conn = conn
	if c.br == nil {
		c.br = bufio.NewReaderSize(conn, 32<<10)
	} else {
		c.br.Reset(conn)
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

// failReason maps an error to a low-cardinality reason: the kind of
// failure without addresses or ports, so failures count by cause.
func failReason(err error) string {
	var ne net.Error
	switch {
	case errors.Is(err, ErrMalformed):
		return "malformed response"
	case errors.As(err, &ne) && ne.Timeout():
		return "timeout"
	case errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded):
		return "canceled"
	}
	var oe *net.OpError
	if errors.As(err, &oe) {
		inner := oe.Err
		for {
			u := errors.Unwrap(inner)
			if u == nil {
				break
			}
			inner = u
		}
		return fmt.Sprintf("%s: %v", oe.Op, inner)
	}
	return err.Error()
}
