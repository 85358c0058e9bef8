package h3

import (
	"net"
	"sync/atomic"
	"syscall"

	"github.com/wirebench/wirebench/measure"
)

// countConn counts the payload of every UDP datagram read or written
// (QUIC packets: headers, frames, AEAD tags; no IP or UDP header).
//
// It is a plain net.PacketConn on purpose: quic-go's batched reads
// (recvmmsg) and GSO need its *net.UDPConn itself and would read past any
// wrapper, so the counted socket goes one datagram per system call — the
// client pays that, the server (quic-go's own listener) does not.
type countConn struct {
	net.PacketConn
	u *net.UDPConn
	n *measure.Bytes
	// closing is set when the connection starts to close (Pool's close,
	// or its trace's end); what goes through the socket from then on is
	// also counted in tear (nil: not), the window in which quic-go may
	// read a datagram and discard it without an event (layers.go).
	closing atomic.Bool
	tear    *measure.Bytes
}

func newCountConn(u *net.UDPConn, n *measure.Bytes) *countConn {
	return &countConn{PacketConn: u, u: u, n: n}
}

// The socket's options stay reachable (quic-go sizes the buffers and sets
// don't-fragment through them); without ReadMsgUDP it reads through
// ReadFrom, so nothing goes uncounted.
func (c *countConn) SetReadBuffer(n int) error             { return c.u.SetReadBuffer(n) }
func (c *countConn) SetWriteBuffer(n int) error            { return c.u.SetWriteBuffer(n) }
func (c *countConn) SyscallConn() (syscall.RawConn, error) { return c.u.SyscallConn() }

func (c *countConn) ReadFrom(p []byte) (int, net.Addr, error) {
	k, addr, err := c.PacketConn.ReadFrom(p)
	if k > 0 {
		c.n.In.Add(int64(k))
		if c.tear != nil && c.closing.Load() {
			c.tear.In.Add(int64(k))
		}
	}
	return k, addr, err
}

func (c *countConn) WriteTo(p []byte, addr net.Addr) (int, error) {
	closing := c.closing.Load()
	k, err := c.PacketConn.WriteTo(p, addr)
	if k > 0 {
		c.n.Out.Add(int64(k))
		if c.tear != nil && closing {
			c.tear.Out.Add(int64(k))
		}
	}
	return k, err
}
