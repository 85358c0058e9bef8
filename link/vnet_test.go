package link

import (
	"bytes"
	"encoding/binary"
	"testing"
)

// superPacket builds an IPv4 super-packet as the kernel hands one over
// with NEEDS_CSUM: one header, the payload of all segments, lengths and
// the pseudo-header sum for the whole.
func superPacket(proto uint8, payload []byte, flags byte) []byte {
	ip := []byte{0x45, 0, 0, 0, 0x12, 0x34, 0x40, 0, 64, proto, 0, 0, 169, 254, 1, 2, 127, 0, 0, 1}
	var th []byte
	if proto == protoTCP {
		th = make([]byte, 32) // with 12 bytes of options
		binary.BigEndian.PutUint16(th[0:], 40000)
		binary.BigEndian.PutUint16(th[2:], 8080)
		binary.BigEndian.PutUint32(th[4:], 0xfffff000) // wraps within the packet
		binary.BigEndian.PutUint32(th[8:], 77)
		th[12] = 8 << 4
		th[13] = flags
		copy(th[20:], []byte{1, 1, 8, 10, 0, 0, 0, 1, 0, 0, 0, 2})
	} else {
		th = make([]byte, 8)
		binary.BigEndian.PutUint16(th[0:], 40000)
		binary.BigEndian.PutUint16(th[2:], 4433)
	}
	p := append(append(ip, th...), payload...)
	if proto == protoUDP {
		binary.BigEndian.PutUint16(p[24:], uint16(len(p)-20))
	}
	csumAt := 20 + 16
	if proto == protoUDP {
		csumAt = 20 + 6
	}
	finishHeaders(p, 20, csumAt, len(p))
	return p
}

// complete finishes a NEEDS_CSUM packet's transport checksum, as the
// receiver would, and says whether the IP header checksum is right.
func complete(t *testing.T, v vnetHdr, p []byte) []byte {
	t.Helper()
	q := append([]byte(nil), p...)
	if fold(sum16(0, q[:20])) != 0xffff {
		t.Fatalf("IP header checksum wrong: %x", q[:20])
	}
	if int(binary.BigEndian.Uint16(q[2:])) != len(q) {
		t.Fatalf("IP total length %d, packet %d", binary.BigEndian.Uint16(q[2:]), len(q))
	}
	at := int(v.csumStart + v.csumOffset)
	binary.BigEndian.PutUint16(q[at:], ^fold(sum16(0, q[v.csumStart:])))
	return q
}

// TestSubrangeSegments: every segment of a TCP and a UDP super-packet,
// cut out alone, is the packet the kernel's segmentation makes (seq,
// flags, IP ID, lengths, checksums that verify), and runs of them carry
// exactly their payload.
func TestSubrangeSegments(t *testing.T) {
	payload := make([]byte, 5*1000+123)
	for i := range payload {
		payload[i] = byte(i * 7)
	}
	for _, proto := range []uint8{protoTCP, protoUDP} {
		const fin, psh, cwr, ack = 0x01, 0x08, 0x80, 0x10
		p := superPacket(proto, payload, fin|psh|cwr|ack)
		gt := uint8(gsoTCPv4)
		if proto == protoUDP {
			gt = gsoUDPL4
		}
		s, ok := parseSegs(vnetHdr{flags: vnetNeedsCsum, gsoType: gt, hdrLen: 9999, gsoSize: 1000}, p)
		if !ok || s.n != 6 {
			t.Fatalf("proto %d: parsed %+v %v, want 6 segments", proto, s, ok)
		}
		hl := s.hdrLen
		var hdr [vnetHdrLen + 120]byte
		var got []byte
		for i := range s.n {
			h, pl := s.subrange(hdr[:], p, i, i+1)
			v := parseVnet(h)
			if v.gsoType != gsoNone || v.flags != vnetNeedsCsum || int(v.hdrLen) != hl {
				t.Fatalf("segment %d: virtio header %+v", i, v)
			}
			seg := complete(t, v, append(append([]byte(nil), h[vnetHdrLen:]...), pl...))
			if w := s.wire(i); len(seg) != w {
				t.Errorf("segment %d: %d bytes, wire says %d", i, len(seg), w)
			}
			// The pseudo-header sum plus the transport bytes verify.
			ps := sum16(uint64(proto)+uint64(len(seg)-20), seg[12:20])
			if fold(sum16(ps, seg[20:])) != 0xffff {
				t.Errorf("segment %d: transport checksum does not verify", i)
			}
			if id := binary.BigEndian.Uint16(seg[4:]); id != 0x1234+uint16(i) {
				t.Errorf("segment %d: IP ID %x", i, id)
			}
			if proto == protoTCP {
				if seq := binary.BigEndian.Uint32(seg[24:]); seq != 0xfffff000+uint32(i*1000) {
					t.Errorf("segment %d: seq %x", i, seq)
				}
				want := byte(ack)
				if i == 0 {
					want |= cwr
				}
				if i == s.n-1 {
					want |= fin | psh
				}
				if seg[33] != want {
					t.Errorf("segment %d: flags %08b, want %08b", i, seg[33], want)
				}
			} else if ul := binary.BigEndian.Uint16(seg[24:]); int(ul) != len(seg)-20 {
				t.Errorf("segment %d: UDP length %d of %d", i, ul, len(seg)-20)
			}
			got = append(got, seg[hl:]...)
		}
		if !bytes.Equal(got, payload) {
			t.Errorf("proto %d: the segments' payloads are not the packet's", proto)
		}
		// A run of segments is a super-packet of its own.
		h, pl := s.subrange(hdr[:], p, 2, 6)
		v := parseVnet(h)
		if v.gsoType != gt || v.gsoSize != 1000 || !bytes.Equal(pl, payload[2000:]) {
			t.Errorf("run [2,6): header %+v, %d payload bytes", v, len(pl))
		}
		complete(t, v, append(append([]byte(nil), h[vnetHdrLen:]...), pl...))
	}
}

func TestJoinUDP(t *testing.T) {
	var dgs [][]byte
	for i, n := range []int{100, 100, 100, 37} {
		dgs = append(dgs, superPacket(protoUDP, bytes.Repeat([]byte{byte(i)}, n), 0))
	}
	for i := 1; i < len(dgs); i++ {
		if !udpJoinable(dgs[0], dgs[i]) {
			t.Fatalf("datagram %d not joinable", i)
		}
	}
	other := superPacket(protoUDP, make([]byte, 100), 0)
	other[23]++ // another port
	big := superPacket(protoUDP, make([]byte, 101), 0)
	if udpJoinable(dgs[0], other) || udpJoinable(dgs[0], big) || udpJoinable(dgs[0], superPacket(protoTCP, make([]byte, 100), 0x10)) {
		t.Error("joinable across flows, sizes or protocols")
	}
	b := joinUDP(make([]byte, vnetHdrLen+maxIPLen), dgs)
	v := parseVnet(b)
	s, ok := parseSegs(v, b[vnetHdrLen:])
	if !ok || s.n != 4 || v.gsoType != gsoUDPL4 || v.gsoSize != 100 {
		t.Fatalf("joined: %+v %+v %v", v, s, ok)
	}
	complete(t, v, b[vnetHdrLen:])
	var hdr [vnetHdrLen + 120]byte
	for i := range s.n {
		h, pl := s.subrange(hdr[:], b[vnetHdrLen:], i, i+1)
		seg := append(append([]byte(nil), h[vnetHdrLen:]...), pl...)
		if !bytes.Equal(seg[28:], dgs[i][28:]) || !bytes.Equal(seg[12:24], dgs[i][12:24]) {
			t.Errorf("datagram %d changed by joining and splitting", i)
		}
	}
}

func TestParseSegsRefuses(t *testing.T) {
	p := superPacket(protoTCP, make([]byte, 3000), 0x10)
	for _, tc := range []struct {
		name string
		v    vnetHdr
		p    []byte
	}{
		{"TCP as UDP", vnetHdr{gsoType: gsoUDPL4, gsoSize: 1000}, p},
		{"IPv6 TSO", vnetHdr{gsoType: 4, gsoSize: 1000}, p},
		{"no gso_size", vnetHdr{gsoType: gsoTCPv4}, p},
		{"short", vnetHdr{}, p[:19]},
		{"IPv6", vnetHdr{}, append([]byte{0x60}, p[1:]...)},
		{"length", vnetHdr{}, p[:100]},
	} {
		if _, ok := parseSegs(tc.v, tc.p); ok {
			t.Errorf("%s: accepted", tc.name)
		}
	}
}
