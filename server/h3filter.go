package server

import (
	"crypto/rand"
	"encoding/binary"
	"hash/maphash"
	"net"
	"sync"
	"syscall"
	"time"

	"github.com/quic-go/quic-go"
	"golang.org/x/net/ipv4"
)

// The HTTP/3 listener's first line against a handshake flood: a filter on
// its UDP socket, under quic-go, that drops the Initial packets of new
// connections past the handshake rates before quic-go reads them. quic-go's
// own refusal (ConnContext, h3.go) answers each Initial it turns away with
// a CONNECTION_REFUSED it seals with new Initial keys and sends, so a
// flood it refuses still costs the server a key derivation, an AEAD seal
// and a sendmsg per packet (30% of its CPU in one measured flood). Here an
// over-rate Initial costs a header parse and a map lookup, and gets no
// reply, as a SYN dropped by a full backlog: RFC 9000 §21.1.1.1 leaves a
// server free to discard an Initial, and a real client resends it after
// its probe timeout.
//
// Every new connection's Initial that passes takes a token from its
// source's bucket and the global one, so quic-go sees at most the rates'
// worth of new connections, whether its second line then admits or
// refuses them (the caps on open connections stay there: only quic-go
// knows when a connection ends). The token is left as a credit on the
// source, which ConnContext spends instead of a second token.

// QUIC's long-header versions whose Initial packets the filter knows: v1
// (RFC 9000) and v2 (RFC 9369, where the type bits of an Initial are 01).
const (
	quicV1 = 0x00000001
	quicV2 = 0x6b3343cf
)

// minInitialDatagram is RFC 9000 §14.1's: a client pads every datagram
// carrying an Initial to 1200 bytes, and quic-go drops a smaller one.
const minInitialDatagram = 1200

// minClientDCID is RFC 9000 §7.2's shortest Destination Connection ID of a
// client's first Initial (quic-go drops a shorter one without a token).
const minClientDCID = 8

// parseInitial reports whether datagram b starts with a QUIC v1 or v2
// Initial packet, and returns its Destination Connection ID and whether it
// carries a token (a Retry's or NEW_TOKEN's). A datagram that is not a
// well-formed Initial is not one.
//
//	byte 0: 1 (long) 1 (fixed) TT (type) ....   bytes 1-4: version
//	DCID length (≤ 20), DCID, SCID length (≤ 20), SCID,
//	token length (a QUIC varint), token, ...
func parseInitial(b []byte) (dcid []byte, token bool, ok bool) {
	if len(b) < 7 || b[0]&0x80 == 0 {
		return nil, false, false
	}
	typ := b[0] >> 4 & 3
	switch binary.BigEndian.Uint32(b[1:5]) {
	case quicV1:
		ok = typ == 0
	case quicV2:
		ok = typ == 1
	}
	if !ok {
		return nil, false, false
	}
	dl := int(b[5])
	if dl > 20 || len(b) < 6+dl+1 {
		return nil, false, false
	}
	dcid = b[6 : 6+dl]
	rest := b[6+dl:]
	sl := int(rest[0])
	if sl > 20 || len(rest) < 1+sl+1 {
		return nil, false, false
	}
	rest = rest[1+sl:]
	// A varint's first two bits give its length; only zero matters here.
	n := 1 << (rest[0] >> 6)
	if len(rest) < n {
		return nil, false, false
	}
	token = rest[0]&0x3f != 0
	for _, c := range rest[1:n] {
		token = token || c != 0
	}
	return dcid, token, true
}

// cidGen makes the server's connection IDs recognisable to the filter
// without keeping them: 4 random bytes (quic-go's own default length of
// randomness) and a 4-byte keyed hash of them. A client's Initial packets
// after the server's first reply carry such an ID (RFC 9000 §7.2), and
// they must pass: they complete a handshake already admitted. The hash is
// not a MAC an attacker cannot forge by luck (1 in 2^32 a packet); one
// that does only reaches quic-go's second line, which charges a token.
type cidGen struct{ seed maphash.Seed }

const cidLen = 8

func newCIDGen() *cidGen { return &cidGen{seed: maphash.MakeSeed()} }

func (g *cidGen) GenerateConnectionID() (quic.ConnectionID, error) {
	var b [cidLen]byte
	rand.Read(b[:4])
	binary.LittleEndian.PutUint32(b[4:], g.tag(b[:4]))
	return quic.ConnectionIDFromBytes(b[:]), nil
}

func (g *cidGen) ConnectionIDLen() int { return cidLen }

func (g *cidGen) tag(r []byte) uint32 { return uint32(maphash.Bytes(g.seed, r)) }

// issued reports whether id is one GenerateConnectionID could have made.
func (g *cidGen) issued(id []byte) bool {
	return len(id) == cidLen && binary.LittleEndian.Uint32(id[4:]) == g.tag(id[:4])
}

// dcidSet remembers the Destination Connection IDs of new connections the
// filter let through, so their other Initial packets (a ClientHello with a
// post-quantum key share spans two; a lost reply makes the client resend)
// pass without another token. Two generations of at most dcidGenMax each,
// the older dropped every dcidGenAge: an ID is kept 5 to 10 s, past any
// resend before the server's first reply (which changes the client's
// DCID), in at most ~2 × dcidGenMax × ~60 bytes.
type dcidSet struct {
	cur, old map[string]struct{}
	since    time.Time
}

const (
	dcidGenAge = 5 * time.Second
	dcidGenMax = 1 << 16
)

func (s *dcidSet) has(id []byte) bool {
	if _, ok := s.cur[string(id)]; ok {
		return true
	}
	_, ok := s.old[string(id)]
	return ok
}

func (s *dcidSet) add(id []byte, now time.Time) {
	if s.cur == nil || now.Sub(s.since) >= dcidGenAge || len(s.cur) >= dcidGenMax {
		s.old, s.cur, s.since = s.cur, make(map[string]struct{}), now
	}
	s.cur[string(id)] = struct{}{}
}

// initialFilter is quic-go's socket with the filter on its read paths. It
// offers quic-go what its own *net.UDPConn would — ReadMsgUDP and
// WriteMsgUDP (its Linux fast path: ECN, GSO, don't-fragment), SyscallConn
// and SetReadBuffer, and ReadBatch (recvmmsg, 8 datagrams a call) — so
// nothing of that path is lost; a plain net.PacketConn wrapper would drop
// quic-go to one system call per datagram and no ECN or GSO.
type initialFilter struct {
	*net.UDPConn
	batch *ipv4.PacketConn
	f     *h3Face

	mu   sync.Mutex // the DCIDs; quic-go reads from one goroutine, so uncontended
	seen dcidSet
}

var _ quic.OOBCapablePacketConn = (*initialFilter)(nil)

func newInitialFilter(u *net.UDPConn, f *h3Face) *initialFilter {
	return &initialFilter{UDPConn: u, batch: ipv4.NewPacketConn(u), f: f}
}

func (c *initialFilter) SyscallConn() (syscall.RawConn, error) { return c.UDPConn.SyscallConn() }

// pass reports whether quic-go may read datagram b from from: anything but
// the Initial of a new connection; that only with its source's and the
// global handshake tokens.
func (c *initialFilter) pass(b []byte, from net.Addr) bool {
	dcid, token, ok := parseInitial(b)
	if !ok || c.f.cids.issued(dcid) {
		return true
	}
	if len(b) < minInitialDatagram || (len(dcid) < minClientDCID && !token) {
		c.f.droppedInvalid.Add(1) // quic-go drops it too, without a reply
		return false
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.seen.has(dcid) {
		return true
	}
	// A source past --h3-retry-after is sent a Retry (h3.go), stateless:
	// no handshake token is taken for it (the client's Initial with the
	// Retry's token is charged by ConnContext), and past its bucket of
	// Retries the Initial is dropped. Not remembered: its other Initial
	// packets are each a Retry's worth.
	if !token && c.f.retryAfter > 0 {
		if retry, ok := c.f.silent.retry(sourceKey(from), c.f.retryAfter, time.Now()); retry {
			if !ok {
				c.f.droppedRetry.Add(1)
			}
			return ok
		}
	}
	switch c.f.reserve(from, time.Now()) {
	case errSourceLimit:
		c.f.droppedSource.Add(1)
		return false
	case errHandshakeRate:
		c.f.droppedRate.Add(1)
		return false
	case errGateQueue:
		c.f.droppedQueue.Add(1)
		return false
	}
	c.seen.add(dcid, time.Now())
	return true
}

// ReadBatch is quic-go's read path on Linux: one recvmmsg for up to
// len(ms) datagrams, the dropped ones taken out. quic-go keeps each
// message's buffer apart (it releases them by index), so a datagram kept
// after a dropped one is copied into the earlier message's buffer rather
// than its slices swapped. It returns only with at least one datagram (or
// an error): quic-go takes a batch of none for a read of nothing.
func (c *initialFilter) ReadBatch(ms []ipv4.Message, flags int) (int, error) {
	for {
		n, err := c.batch.ReadBatch(ms, flags)
		if err != nil || n == 0 {
			return n, err
		}
		k := 0
		for i := range n {
			m := &ms[i]
			if !c.pass(m.Buffers[0][:m.N], m.Addr) {
				continue
			}
			if k != i {
				d := &ms[k]
				d.N = copy(d.Buffers[0], m.Buffers[0][:m.N])
				d.NN = copy(d.OOB, m.OOB[:m.NN])
				d.Flags, d.Addr = m.Flags, m.Addr
			}
			k++
		}
		if k > 0 {
			return k, nil
		}
	}
}

// ReadMsgUDP and ReadFrom are the read paths quic-go takes where it has no
// batch reads (other systems); filtered the same.
func (c *initialFilter) ReadMsgUDP(b, oob []byte) (n, oobn, flags int, addr *net.UDPAddr, err error) {
	for {
		n, oobn, flags, addr, err = c.UDPConn.ReadMsgUDP(b, oob)
		if err != nil || c.pass(b[:n], addr) {
			return n, oobn, flags, addr, err
		}
	}
}

func (c *initialFilter) ReadFrom(b []byte) (int, net.Addr, error) {
	for {
		n, addr, err := c.UDPConn.ReadFrom(b)
		if err != nil || c.pass(b[:n], addr) {
			return n, addr, err
		}
	}
}
