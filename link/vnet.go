package link

import (
	"bytes"
	"encoding/binary"
)

// The TUN devices are opened with IFF_VNET_HDR and TCP and UDP
// segmentation offloads (TUNSETOFFLOAD), as virtual machines' taps are:
// every packet read or written is prefixed with a virtio_net_hdr,
//
//	0       1          2         4          6            8             10
//	+-------+----------+---------+----------+------------+-------------+-----------
//	| flags | gso_type | hdr_len | gso_size | csum_start | csum_offset | IP packet…
//	+-------+----------+---------+----------+------------+-------------+-----------
//
// (16-bit fields in the host's byte order), and the kernel hands over
// TCP and UDP super-packets of up to 64 KiB: one IP and transport header
// and the payload of many segments of gso_size bytes, each of which goes
// on the wire as a packet of its own with the headers repeated. One read
// and one write then carry tens of wire packets, where a plain TUN
// device costs two system calls each. The relay still applies the link
// to every segment (segs.wire gives each one's size on the wire), and
// writes back the runs of segments that are due together (subrange).
const vnetHdrLen = 10

const (
	vnetNeedsCsum = 1 // VIRTIO_NET_HDR_F_NEEDS_CSUM: the checksum is left to finish
	gsoNone       = 0
	gsoTCPv4      = 1 // VIRTIO_NET_HDR_GSO_TCPV4
	gsoUDPL4      = 5 // VIRTIO_NET_HDR_GSO_UDP_L4
	gsoECN        = 0x80

	protoTCP = 6
	protoUDP = 17

	// maxUDPSegs bounds a UDP super-packet the relay builds, as the
	// kernel bounds one a socket sends (UDP_MAX_SEGMENTS).
	maxUDPSegs = 64
	maxIPLen   = 65535
)

type vnetHdr struct {
	flags, gsoType                         uint8
	hdrLen, gsoSize, csumStart, csumOffset uint16
}

func parseVnet(b []byte) vnetHdr {
	e := binary.NativeEndian
	return vnetHdr{b[0], b[1], e.Uint16(b[2:]), e.Uint16(b[4:]), e.Uint16(b[6:]), e.Uint16(b[8:])}
}

func (h vnetHdr) put(b []byte) {
	e := binary.NativeEndian
	b[0], b[1] = h.flags, h.gsoType
	e.PutUint16(b[2:], h.hdrLen)
	e.PutUint16(b[4:], h.gsoSize)
	e.PutUint16(b[6:], h.csumStart)
	e.PutUint16(b[8:], h.csumOffset)
}

// segs is an IP packet read from a TUN device as the wire packets
// (segments) it stands for: one for a plain packet, n for a super-packet.
type segs struct {
	gso    uint8 // gsoNone, gsoTCPv4 or gsoUDPL4
	proto  uint8 // the IP protocol
	iphLen int   // IP header
	hdrLen int   // IP and transport headers, repeated in every segment
	size   int   // payload bytes of a segment (the last may be shorter)
	n      int   // segments
	plen   int   // the packet's length
}

// parseSegs describes the IPv4 packet p read with virtio header h; ok is
// false for what the relay does not carry (not IPv4, malformed, or an
// offload it did not ask for).
func parseSegs(h vnetHdr, p []byte) (s segs, ok bool) {
	if len(p) < 20 || p[0]>>4 != 4 {
		return s, false
	}
	s.iphLen = int(p[0]&0x0f) * 4
	s.proto = p[9]
	s.plen = len(p)
	if s.iphLen < 20 || len(p) < s.iphLen || int(binary.BigEndian.Uint16(p[2:])) != len(p) && h.gsoType == gsoNone {
		return s, false
	}
	s.n, s.hdrLen, s.size = 1, len(p), len(p)
	switch h.gsoType &^ gsoECN {
	case gsoNone:
		return s, true
	case gsoTCPv4:
		// hdr_len is not to be trusted (the kernel may give the whole
		// first segment's length): the TCP header says its own.
		if s.proto != protoTCP || len(p) < s.iphLen+20 {
			return s, false
		}
		s.hdrLen = s.iphLen + int(p[s.iphLen+12]>>4)*4
	case gsoUDPL4:
		if s.proto != protoUDP {
			return s, false
		}
		s.hdrLen = s.iphLen + 8
	default:
		return s, false
	}
	s.gso = h.gsoType &^ gsoECN
	s.size = int(h.gsoSize)
	if s.size == 0 || len(p) <= s.hdrLen {
		return s, false
	}
	s.n = (len(p) - s.hdrLen + s.size - 1) / s.size
	return s, true
}

// wire is segment i's size on the wire (its IP packet).
func (s *segs) wire(i int) int {
	if s.gso == gsoNone {
		return s.plen
	}
	return s.hdrLen + min(s.size, s.plen-s.hdrLen-i*s.size)
}

// subrange writes into hdr (vnetHdrLen+60+60 bytes at least) the virtio,
// IP and transport headers of segments [a, b) of super-packet p, as the
// kernel's segmentation would have made them and joined again, and
// returns them with the payload that follows them: written together,
// they are one packet (b-a = 1) or a super-packet of b-a segments.
func (s *segs) subrange(hdr, p []byte, a, b int) (head, payload []byte) {
	payload = p[s.hdrLen+a*s.size : min(s.plen, s.hdrLen+b*s.size)]
	plen := s.hdrLen + len(payload)
	v := vnetHdr{flags: vnetNeedsCsum, hdrLen: uint16(s.hdrLen), csumStart: uint16(s.iphLen)}
	if b-a > 1 {
		v.gsoType, v.gsoSize = s.gso, uint16(s.size)
	}
	head = hdr[:vnetHdrLen+s.hdrLen]
	ip := head[vnetHdrLen:]
	copy(ip, p[:s.hdrLen])
	// Each segment has an IP ID of its own, one up from the one before.
	binary.BigEndian.PutUint16(ip[4:], binary.BigEndian.Uint16(ip[4:])+uint16(a))
	th := ip[s.iphLen:]
	if s.gso == gsoTCPv4 {
		v.csumOffset = 16
		binary.BigEndian.PutUint32(th[4:], binary.BigEndian.Uint32(th[4:])+uint32(a*s.size))
		const fin, psh, cwr = 0x01, 0x08, 0x80
		if a > 0 {
			th[13] &^= cwr // CWR on the first segment only
		}
		if b < s.n {
			th[13] &^= fin | psh // FIN and PSH on the last only
		}
	} else {
		v.csumOffset = 6
		binary.BigEndian.PutUint16(th[4:], uint16(plen-s.iphLen))
	}
	v.put(head)
	finishHeaders(ip, s.iphLen, int(v.csumStart+v.csumOffset), plen)
	return head, payload
}

// finishHeaders sets an IPv4 packet's total length to plen and its
// header checksum, and puts in the transport checksum field at csumAt
// the pseudo-header sum that NEEDS_CSUM asks the receiver to complete.
func finishHeaders(ip []byte, iphLen, csumAt, plen int) {
	binary.BigEndian.PutUint16(ip[2:], uint16(plen))
	ip[10], ip[11] = 0, 0
	binary.BigEndian.PutUint16(ip[10:], ^fold(sum16(0, ip[:iphLen])))
	ps := sum16(uint64(ip[9])+uint64(plen-iphLen), ip[12:20])
	binary.BigEndian.PutUint16(ip[csumAt:], fold(ps))
}

// sum16 adds b to sum as big-endian 16-bit words (the Internet checksum,
// unfolded).
func sum16(sum uint64, b []byte) uint64 {
	for len(b) >= 2 {
		sum += uint64(binary.BigEndian.Uint16(b))
		b = b[2:]
	}
	if len(b) == 1 {
		sum += uint64(b[0]) << 8
	}
	return sum
}

func fold(sum uint64) uint16 {
	for sum > 0xffff {
		sum = sum>>16 + sum&0xffff
	}
	return uint16(sum)
}

// udpJoinable says whether the plain UDP datagram q can follow p in one
// UDP super-packet: same flow, same IP header fields that the kernel's
// segmentation copies (no options, not a fragment), and q no longer than
// p (only the last segment may be short).
func udpJoinable(p, q []byte) bool {
	const minLen = 20 + 8
	if len(p) < minLen || len(q) < minLen || p[0] != 0x45 || q[0] != 0x45 || p[9] != protoUDP || q[9] != protoUDP {
		return false
	}
	// Not fragments: no MF, no offset.
	if p[6]&0x3f != 0 || p[7] != 0 || q[6]&0x3f != 0 || q[7] != 0 {
		return false
	}
	return p[1] == q[1] && p[6] == q[6] && p[8] == q[8] && bytes.Equal(p[12:24], q[12:24]) && len(q) <= len(p)
}

// joinUDP writes into dst the virtio header and one UDP super-packet
// carrying the datagrams dgs (each a plain IPv4 UDP datagram, all
// udpJoinable with the first, all but the last of the first's size) and
// returns it.
func joinUDP(dst []byte, dgs [][]byte) []byte {
	const hl = 20 + 8
	size := len(dgs[0]) - hl
	v := vnetHdr{flags: vnetNeedsCsum, gsoType: gsoUDPL4, hdrLen: hl, gsoSize: uint16(size), csumStart: 20, csumOffset: 6}
	v.put(dst)
	b := append(dst[:vnetHdrLen], dgs[0][:hl]...)
	for _, d := range dgs {
		b = append(b, d[hl:]...)
	}
	ip := b[vnetHdrLen:]
	binary.BigEndian.PutUint16(ip[24:], uint16(len(ip)-20))
	finishHeaders(ip, 20, 26, len(ip))
	return b
}
