package server

import (
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
