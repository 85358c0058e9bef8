package h3

import (
	"net"
	"sync/atomic"
	"syscall"

	"golang.org/x/net/ipv4"

	"github.com/wirebench/wirebench/measure"
)

// countConn counts the payload of every UDP datagram read or written
// (QUIC packets: headers, frames, AEAD tags; no IP or UDP header).
//
// It gives quic-go everything its own *net.UDPConn would: ReadMsgUDP and
// WriteMsgUDP (so quic-go takes its Linux fast path: ECN, GSO — one
// sendmsg for a train of packets — and don't-fragment) and ReadBatch (its
// recvmmsg reads, up to 8 datagrams a system call), each counted here.
// A plain net.PacketConn would cost one system call per datagram each
// way, and the client measured 1.2× a bare quic-go client's CPU per
// request that way.
type countConn struct {
	net.PacketConn
	u *net.UDPConn
	// batch reads many datagrams a call (recvmmsg); quic-go takes it
	// for its own ipv4.NewPacketConn of the socket when the conn has one.
	batch *ipv4.PacketConn
	n     *measure.Bytes
	// closing is set when the connection starts to close (Pool's close,
	// or its trace's end); what goes through the socket from then on is
	// also counted in tear (nil: not), the window in which quic-go may
	// read a datagram and discard it without an event (layers.go).
	closing atomic.Bool
	tear    *measure.Bytes
	in      atomic.Int64              // this socket's bytes in
	trace   atomic.Pointer[connTrace] // its connection's trace, if any
}

// markClosing sets closing. What the socket carried in and the trace has
// not logged yet counts in tear too: datagrams quic-go read just before
// and had queued, which a closing connection discards without an event
// (a late ACK of the server, read while the pool closed a connection; an
// unattributed 26 bytes in about 1 of 300 runs of TestZeroRTTAccepted,
// 1 in 40 s of three runs at once). tear only bounds what counts as
// QUIC's there (layers.go), so a byte counted in it twice widens the
// bound, never a layer.
func (c *countConn) markClosing() {
	if c.closing.Swap(true) || c.tear == nil {
		return
	}
	if t := c.trace.Load(); t != nil {
		if pending := c.in.Load() - t.loggedIn.Load(); pending > 0 {
			c.tear.In.Add(pending)
		}
	}
}

func newCountConn(u *net.UDPConn, n *measure.Bytes) *countConn {
	return &countConn{PacketConn: u, u: u, batch: ipv4.NewPacketConn(u), n: n}
}

// The socket's options stay reachable (quic-go sizes the buffers, sets
// don't-fragment and ECN and probes GSO through them); every read and
// write goes through the counted methods below, so nothing goes uncounted.
func (c *countConn) SetReadBuffer(n int) error             { return c.u.SetReadBuffer(n) }
func (c *countConn) SetWriteBuffer(n int) error            { return c.u.SetWriteBuffer(n) }
func (c *countConn) SyscallConn() (syscall.RawConn, error) { return c.u.SyscallConn() }

func (c *countConn) ReadFrom(p []byte) (int, net.Addr, error) {
	k, addr, err := c.PacketConn.ReadFrom(p)
	c.countIn(int64(k))
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

// ReadBatch is quic-go's read path on Linux: one recvmmsg for up to
// len(ms) datagrams (an IPv6 socket's messages have the same layout).
func (c *countConn) ReadBatch(ms []ipv4.Message, flags int) (int, error) {
	k, err := c.batch.ReadBatch(ms, flags)
	var sum int64
	for i := range k {
		sum += int64(ms[i].N)
	}
	c.countIn(sum)
	return k, err
}

func (c *countConn) ReadMsgUDP(b, oob []byte) (int, int, int, *net.UDPAddr, error) {
	k, oobn, flags, addr, err := c.u.ReadMsgUDP(b, oob)
	c.countIn(int64(k))
	return k, oobn, flags, addr, err
}

// WriteMsgUDP is quic-go's write path: with GSO, b is a train of packets
// of the segment size the oob names, each its own datagram on the wire;
// their payloads add up to len(b).
func (c *countConn) WriteMsgUDP(b, oob []byte, addr *net.UDPAddr) (int, int, error) {
	closing := c.closing.Load()
	k, oobn, err := c.u.WriteMsgUDP(b, oob, addr)
	if k > 0 {
		c.n.Out.Add(int64(k))
		if c.tear != nil && closing {
			c.tear.Out.Add(int64(k))
		}
	}
	return k, oobn, err
}

func (c *countConn) countIn(k int64) {
	if k > 0 {
		c.n.In.Add(k)
		c.in.Add(k) // before closing's load: markClosing sees it, or the load sees closing
		if c.tear != nil && c.closing.Load() {
			c.tear.In.Add(k)
		}
	}
}
