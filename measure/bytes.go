package measure

import (
	"context"
	"net"
	"sync/atomic"
)

// Bytes is a pair of wire byte counters. The fields are atomic so that a
// live reporter may read them while the owning connection writes; one
// uncontended atomic add per read or write syscall is noise next to the
// syscall itself.
type Bytes struct {
	In, Out atomic.Int64
}

// Conn wraps a net.Conn and counts every byte that crosses it, so byte
// totals come from the socket and never from Content-Length (hey's bug:
// a chunked response has Content-Length -1).
type Conn struct {
	net.Conn
	n *Bytes
}

// CountConn wraps c so that its reads add to n.In and its writes to n.Out.
// Several connections may share one Bytes.
func CountConn(c net.Conn, n *Bytes) *Conn { return &Conn{Conn: c, n: n} }

// Read counts the bytes read.
func (c *Conn) Read(p []byte) (int, error) {
	k, err := c.Conn.Read(p)
	if k > 0 {
		c.n.In.Add(int64(k))
	}
	return k, err
}

// Write counts the bytes written.
func (c *Conn) Write(p []byte) (int, error) {
	k, err := c.Conn.Write(p)
	if k > 0 {
		c.n.Out.Add(int64(k))
	}
	return k, err
}

// DialFunc is the shape of net.Dialer.DialContext.
type DialFunc func(ctx context.Context, network, addr string) (net.Conn, error)

// CountingDialer returns a DialFunc whose connections count into n.
func CountingDialer(dial DialFunc, n *Bytes) DialFunc {
	return func(ctx context.Context, network, addr string) (net.Conn, error) {
		c, err := dial(ctx, network, addr)
		if err != nil {
			return nil, err
		}
		return CountConn(c, n), nil
	}
}

// Listener wraps a net.Listener so that every accepted connection counts
// into one Bytes: the server's view of the traffic, which tests compare
// with the client's.
type Listener struct {
	net.Listener
	Bytes Bytes
}

// Accept wraps the accepted connection in a counting Conn.
func (l *Listener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	return CountConn(c, &l.Bytes), nil
}
