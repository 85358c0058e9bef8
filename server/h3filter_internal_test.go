package server

import (
	"bytes"
	"crypto/rand"
	"net"
	"testing"
	"time"

	"golang.org/x/net/ipv4"

	"github.com/wirebench/wirebench/internal/quicflood"
)

// initialOf is the first Initial packet of a new connection dcid carrying
// hello, as a client sends it (1200 bytes, protected).
func initialOf(t testing.TB, dcid []byte) []byte {
	t.Helper()
	scid := []byte{9, 9, 9, 9, 9, 9, 9, 9}
	hello, err := quicflood.ClientHello(scid)
	if err != nil {
		t.Fatal(err)
	}
	p, _ := quicflood.InitialPacket(nil, quicflood.ClientInitialKeys(dcid), dcid, scid, 0, hello, 0)
	return p
}

// TestParseInitial: the Initials of QUIC v1 and v2 and nothing else, with
// their Destination Connection ID and whether they carry a token.
func TestParseInitial(t *testing.T) {
	dcid := []byte{1, 2, 3, 4, 5, 6, 7, 8}
	real := initialOf(t, dcid)
	long := func(first byte, version uint32, dcid []byte, token []byte) []byte {
		b := []byte{first, byte(version >> 24), byte(version >> 16), byte(version >> 8), byte(version)}
		b = append(b, byte(len(dcid)))
		b = append(b, dcid...)
		b = append(b, 2, 0xaa, 0xbb) // SCID
		b = append(b, byte(len(token)))
		b = append(b, token...)
		return append(b, make([]byte, 40)...)
	}
	for _, c := range []struct {
		name        string
		b           []byte
		ok, token   bool
		wantDCIDLen int
	}{
		{"a client's first Initial (quicflood)", real, true, false, 8},
		{"v1 Initial", long(0xc0, quicV1, dcid, nil), true, false, 8},
		{"v1 Initial with a token", long(0xc3, quicV1, dcid[:4], []byte{7, 7}), true, true, 4},
		{"v2 Initial (type 01)", long(0xd0, quicV2, dcid, nil), true, false, 8},
		{"v1 0-RTT", long(0xd0, quicV1, dcid, nil), false, false, 0},
		{"v1 Handshake", long(0xe0, quicV1, dcid, nil), false, false, 0},
		{"v2 Handshake", long(0xf0, quicV2, dcid, nil), false, false, 0},
		{"v2 Retry (type 00)", long(0xc0, quicV2, dcid, nil), false, false, 0},
		{"unknown version", long(0xc0, 0x1a2a3a4a, dcid, nil), false, false, 0},
		{"version negotiation", long(0xc0, 0, dcid, nil), false, false, 0},
		{"short header", append([]byte{0x40}, dcid...), false, false, 0},
		{"DCID longer than 20", long(0xc0, quicV1, make([]byte, 21), nil), false, false, 0},
		{"cut in the DCID", real[:10], false, false, 0},
		{"cut before the token length", real[:6+8+1+8], false, false, 0},
		{"empty", nil, false, false, 0},
	} {
		d, token, ok := parseInitial(c.b)
		if ok != c.ok || token != c.token || len(d) != c.wantDCIDLen {
			t.Errorf("%s: ok %v token %v DCID %x; want ok %v token %v, a DCID of %d bytes", c.name, ok, token, d, c.ok, c.token, c.wantDCIDLen)
		}
	}
	if d, _, _ := parseInitial(real); !bytes.Equal(d, dcid) {
		t.Errorf("DCID %x, want %x", d, dcid)
	}
}

// FuzzParseInitial: never panics, and a DCID it returns lies in the packet.
func FuzzParseInitial(f *testing.F) {
	f.Add(initialOf(f, []byte{1, 2, 3, 4, 5, 6, 7, 8}))
	f.Add([]byte{0xc0, 0, 0, 0, 1, 8, 1, 2, 3, 4, 5, 6, 7, 8, 0, 0x40})
	f.Fuzz(func(t *testing.T, b []byte) {
		d, _, ok := parseInitial(b)
		if ok && (len(d) > 20 || len(b) < 6+len(d) || !bytes.Equal(d, b[6:6+len(d)])) {
			t.Fatalf("DCID %x outside %x", d, b)
		}
	})
}

// TestCIDGen: the server's own connection IDs are recognised, random ones
// are not (a forgery passes 1 time in 2^32).
func TestCIDGen(t *testing.T) {
	g := newCIDGen()
	for range 1000 {
		id, _ := g.GenerateConnectionID()
		if id.Len() != g.ConnectionIDLen() || !g.issued(id.Bytes()) {
			t.Fatalf("an ID the server made (%v) is not recognised", id)
		}
	}
	forged := 0
	b := make([]byte, cidLen)
	for range 100_000 {
		rand.Read(b)
		if g.issued(b) {
			forged++
		}
	}
	if forged > 1 {
		t.Errorf("%d of 100,000 random IDs taken for the server's", forged)
	}
	other := newCIDGen()
	taken := 0
	for range 100 {
		if other.issued(mustID(g)) {
			taken++
		}
	}
	if taken > 1 {
		t.Errorf("another server's key recognises %d of 100 of this server's IDs", taken)
	}
}

func mustID(g *cidGen) []byte { id, _ := g.GenerateConnectionID(); return id.Bytes() }

// TestDCIDSet: an ID is remembered for one to two generations, and a full
// generation starts the next.
func TestDCIDSet(t *testing.T) {
	var s dcidSet
	t0 := time.Unix(1000, 0)
	s.add([]byte("a"), t0)
	s.add([]byte("b"), t0.Add(dcidGenAge))
	if !s.has([]byte("a")) || !s.has([]byte("b")) {
		t.Fatal("an ID forgotten within two generations")
	}
	s.add([]byte("c"), t0.Add(2*dcidGenAge))
	if s.has([]byte("a")) || !s.has([]byte("b")) || !s.has([]byte("c")) {
		t.Error("generations: want a forgotten, b and c kept")
	}
	for i := range dcidGenMax + 1 {
		s.add([]byte{byte(i), byte(i >> 8), byte(i >> 16)}, t0.Add(2*dcidGenAge))
	}
	if len(s.cur) > dcidGenMax || len(s.old) > dcidGenMax {
		t.Errorf("generations of %d and %d IDs, want at most %d", len(s.cur), len(s.old), dcidGenMax)
	}
}

// TestInitialFilterReadBatch: quic-go's batched read through the filter.
// Of a client's datagrams — Initials of new connections past a source
// rate of 2, a second Initial of an admitted connection, a short-header
// packet, an Initial to one of the server's own IDs, a runt Initial — the
// over-rate and invalid ones are taken out and the others arrive whole,
// in order, each in its own message's buffer.
func TestInitialFilterReadBatch(t *testing.T) {
	u, err := net.ListenUDP("udp", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		t.Fatal(err)
	}
	defer u.Close()
	f := &h3Face{handshakes: newBucket(1000, time.Second), perSource: newSources(-1, 2, time.Second), cids: newCIDGen()}
	c := newInitialFilter(u, f)
	cl, err := net.DialUDP("udp", nil, u.LocalAddr().(*net.UDPAddr))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	var conn [10][]byte
	for i := range conn {
		b := byte(i)
		conn[i] = initialOf(t, []byte{b, b, b, b, b, b, b, b})
	}
	short := append([]byte{0x40}, bytes.Repeat([]byte{'s'}, 100)...)
	own := initialOf(t, mustID(f.cids))
	runt := conn[9][:600]
	send := [][]byte{conn[1], conn[2], conn[3], short, conn[1], conn[4], own, runt, conn[2]}
	want := [][]byte{conn[1], conn[2], short, conn[1], own, conn[2]}
	for _, b := range send {
		if _, err := cl.Write(b); err != nil {
			t.Fatal(err)
		}
	}
	ms := make([]ipv4.Message, 8)
	for i := range ms {
		ms[i].Buffers = [][]byte{make([]byte, 1500)}
		ms[i].OOB = make([]byte, 128)
	}
	var got [][]byte
	u.SetReadDeadline(time.Now().Add(time.Minute))
	for len(got) < len(want) {
		n, err := c.ReadBatch(ms, 0)
		if err != nil {
			t.Fatalf("after %d datagrams: %v", len(got), err)
		}
		if n == 0 {
			t.Fatal("a batch of none")
		}
		for _, m := range ms[:n] {
			got = append(got, bytes.Clone(m.Buffers[0][:m.N]))
			if m.Addr.String() != cl.LocalAddr().String() {
				t.Errorf("from %v, want %v", m.Addr, cl.LocalAddr())
			}
		}
	}
	for i := range want {
		if !bytes.Equal(got[i], want[i]) {
			t.Errorf("datagram %d of those kept: %d bytes %x…, want %d bytes %x…", i, len(got[i]), got[i][:8], len(want[i]), want[i][:8])
		}
	}
	if s, v := f.droppedSource.Load(), f.droppedInvalid.Load(); s != 2 || v != 1 {
		t.Errorf("dropped: %d past the source's rate (want 2: connections 3 and 4), %d invalid (want 1)", s, v)
	}
}
