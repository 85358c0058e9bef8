package server

import (
	"errors"
	"net"
	"net/netip"
	"testing"
	"time"
)

// TestBucket: a burst's worth at once, then one per 1/rate, never more
// than the burst saved up; a nil bucket admits everything.
func TestBucket(t *testing.T) {
	b := newBucket(4, time.Second)
	t0 := time.Unix(1000, 0)
	got := 0
	for range 10 {
		if b.allow(t0) {
			got++
		}
	}
	if got != 4 {
		t.Fatalf("burst: %d admitted at once, want 4", got)
	}
	if b.allow(t0.Add(200 * time.Millisecond)) {
		t.Error("admitted 200 ms later: a token takes 250 ms")
	}
	if !b.allow(t0.Add(260 * time.Millisecond)) {
		t.Error("refused 260 ms later: a token came back at 250 ms")
	}
	got = 0
	for range 10 { // a long quiet spell refills to the burst, not past it
		if b.allow(t0.Add(time.Hour)) {
			got++
		}
	}
	if got != 4 {
		t.Errorf("after an hour: %d admitted at once, want 4", got)
	}
	var none *bucket
	if newBucket(-1, time.Second) != nil || !none.allow(t0) {
		t.Error("an unbounded rate must admit everything")
	}
	// A tenth of a second's worth (--h3-handshake-burst 100ms), at least one.
	for _, c := range []struct{ rate, want int }{{1000, 100}, {500, 50}, {2, 1}} {
		b := newBucket(c.rate, 100*time.Millisecond)
		got := 0
		for range 2 * c.want {
			if b.allow(t0) {
				got++
			}
		}
		if got != c.want {
			t.Errorf("rate %d, burst 100ms: %d at once, want %d", c.rate, got, c.want)
		}
	}
}

// TestSources: a source's connections and handshake tokens are bounded on
// their own; a refusal by the global bounds counts nothing; a source with
// nothing open and a full bucket is forgotten; IPv6 sources are /64s.
func TestSources(t *testing.T) {
	s := newSources(2, 3, time.Second)
	a, b := netip.MustParsePrefix("10.0.0.1/32"), netip.MustParsePrefix("10.0.0.2/32")
	t0 := time.Unix(1000, 0)
	ok := func(bool) error { return nil }
	for i := range 2 {
		if err := s.admit(a, t0, ok); err != nil {
			t.Fatalf("a source's connection %d refused: %v", i+1, err)
		}
	}
	if s.admit(a, t0, ok) != errSourceLimit {
		t.Error("a third connection open at once from one source admitted at --h3-source-conns 2")
	}
	if s.admit(b, t0, ok) != nil {
		t.Error("another source refused")
	}
	s.release(a)
	if s.admit(a, t0, ok) != nil {
		t.Error("refused after one of its connections closed")
	}
	s.release(a)
	if s.admit(a, t0, ok) != errSourceLimit {
		t.Error("a fourth handshake in the same instant admitted at --h3-source-rate 3")
	}
	global := errors.New("global")
	if s.admit(netip.MustParsePrefix("10.0.0.3/32"), t0, func(bool) error { return global }) != global || len(s.m) != 2 {
		t.Errorf("a source refused by the global bounds is recorded: %d sources", len(s.m))
	}
	s.release(a)
	s.release(a)
	s.release(b)
	s.sweep(t0.Add(2 * time.Second))
	if len(s.m) != 0 {
		t.Errorf("%d sources kept with nothing open and full buckets", len(s.m))
	}
	v6 := func(ip string) netip.Prefix { return sourceKey(&net.UDPAddr{IP: net.ParseIP(ip)}) }
	if v6("2001:db8::1") != v6("2001:db8::ffff:1") || v6("2001:db8::1") == v6("2001:db8:0:1::1") {
		t.Error("IPv6 sources are not their /64")
	}
	if sourceKey(&net.UDPAddr{IP: net.ParseIP("127.0.0.1")}) != netip.MustParsePrefix("127.0.0.1/32") {
		t.Error("an IPv4 source (as the 16-byte form net gives) is not its address")
	}
}

// TestSourceCredits: a token the socket filter took (reserve) is spent by
// the connection's admission rather than a second one, whatever the
// answer; a source past its rate or the global one reserves nothing; the
// credits saved are at most a burst.
func TestSourceCredits(t *testing.T) {
	s := newSources(1, 2, time.Second)
	a := netip.MustParsePrefix("10.0.0.1/32")
	t0 := time.Unix(1000, 0)
	yes := func() error { return nil }
	for i := range 2 {
		if err := s.reserve(a, t0, yes); err != nil {
			t.Fatalf("reserve %d of a burst of 2: %v", i+1, err)
		}
	}
	if s.reserve(a, t0, yes) != errSourceLimit {
		t.Fatal("a third reserve in the same instant at rate 2")
	}
	charged := 0
	next := func(credited bool) error {
		if !credited {
			charged++
		}
		return nil
	}
	if err := s.admit(a, t0, next); err != nil || charged != 0 {
		t.Fatalf("admitting a reserved connection: %v, charged %d times", err, charged)
	}
	// The second credit is spent on a refusal (one connection open at
	// --h3-source-conns 1), and no token is left for a third.
	if s.admit(a, t0, next) != errSourceLimit || s.m[a].credit != 0 {
		t.Fatalf("past the source's cap: credit %d left", s.m[a].credit)
	}
	s.release(a)
	if s.admit(a, t0, next) != errSourceLimit {
		t.Error("admitted with neither a credit nor a token")
	}
	global := errors.New("global")
	b := netip.MustParsePrefix("10.0.0.2/32")
	if s.reserve(b, t0, func() error { return global }) != global || s.m[b] != nil {
		t.Error("a reserve refused by the global rate recorded its source")
	}
	// Credits never saved up past their cap (Initials that passed and
	// never reached admission).
	for i := range 2 * minCredits {
		s.reserve(b, t0.Add(time.Duration(i)*time.Second), yes)
	}
	if c := s.m[b].credit; c != minCredits {
		t.Errorf("%d credits saved, want the cap, %d", c, minCredits)
	}
}

// TestCreditOutlivesTheSweep: with no per-source rate a source has no
// bucket to keep it recorded, and its credit must still reach admission
// (the first sweep used to forget it at once: every handshake let through
// was then charged the global rate again and refused); a credit never
// spent is forgotten after a second.
func TestCreditOutlivesTheSweep(t *testing.T) {
	s := newSources(-1, -1, time.Second)
	a := netip.MustParsePrefix("10.0.0.1/32")
	t0 := time.Unix(1000, 0)
	if err := s.reserve(a, t0, func() error { return nil }); err != nil {
		t.Fatal(err)
	}
	if err := s.admit(a, t0, func(credited bool) error {
		if !credited {
			return errors.New("not credited")
		}
		return nil
	}); err != nil {
		t.Fatalf("the reserved connection: %v", err)
	}
	s.release(a)
	b := netip.MustParsePrefix("10.0.0.2/32")
	s.reserve(b, t0.Add(2*time.Second), func() error { return nil }) // never admitted; its sweep runs
	if len(s.m) != 1 || s.m[b] == nil {
		t.Fatalf("%d sources kept, want b's fresh credit only", len(s.m))
	}
	s.sweep(t0.Add(4 * time.Second))
	if len(s.m) != 0 {
		t.Errorf("a credit never spent kept its source past a second")
	}
}

// TestReplySharesAcrossTransports: a source's TCP and QUIC connections
// get one share of the reply budget, an IPv4-mapped IPv6 address (a
// dual-stack listener's view of an IPv4 client) counting as the IPv4
// source; another source gets its own.
func TestReplySharesAcrossTransports(t *testing.T) {
	var s replyShares
	v4 := s.get(sourceKey(&net.UDPAddr{IP: net.IPv4(10, 1, 2, 3).To4()}))
	for _, a := range []net.Addr{
		&net.UDPAddr{IP: net.ParseIP("::ffff:10.1.2.3"), Port: 443},
		&net.TCPAddr{IP: net.IPv4(10, 1, 2, 3).To4(), Port: 50000},
		&net.TCPAddr{IP: net.ParseIP("::ffff:10.1.2.3"), Port: 50001},
	} {
		key := sourceKey(a)
		if ta, ok := a.(*net.TCPAddr); ok {
			key = tcpSourceKey(ta)
		}
		if key != netip.MustParsePrefix("10.1.2.3/32") {
			t.Errorf("%T %v: source %v, want 10.1.2.3/32", a, a, key)
		}
		if s.get(key) != v4 {
			t.Errorf("%T %v: a share of its own, want the IPv4 source's", a, a)
		}
	}
	if s.get(tcpSourceKey(&net.TCPAddr{IP: net.IPv4(10, 1, 2, 4)})) == v4 {
		t.Error("another source shares 10.1.2.3's")
	}
}
