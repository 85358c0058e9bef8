package server

import (
	"errors"
	"net"
	"net/netip"
	"testing"
	"time"
)

// TestBucket: a second's worth at once, then one per 1/rate, never more
// than a second's worth saved up; a nil bucket admits everything.
func TestBucket(t *testing.T) {
	b := newBucket(4)
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
	if newBucket(-1) != nil || !none.allow(t0) {
		t.Error("an unbounded rate must admit everything")
	}
}

// TestSources: a source's connections and handshake tokens are bounded on
// their own; a refusal by the global bounds counts nothing; a source with
// nothing open and a full bucket is forgotten; IPv6 sources are /64s.
func TestSources(t *testing.T) {
	s := newSources(2, 3)
	a, b := netip.MustParsePrefix("10.0.0.1/32"), netip.MustParsePrefix("10.0.0.2/32")
	t0 := time.Unix(1000, 0)
	ok := func() error { return nil }
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
	if s.admit(netip.MustParsePrefix("10.0.0.3/32"), t0, func() error { return global }) != global || len(s.m) != 2 {
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
