package httpapi

import (
	"testing"

	"github.com/wirebench/wirebench/store"
)

// TestReplyBudget pins the budget's arithmetic: a reply that fits exactly
// is taken, one byte more is shed while others hold some, a reply alone
// always fits, and release gives back exactly what was taken.
func TestReplyBudget(t *testing.T) {
	b := replyBudget{limit: 10}
	if !b.acquire(4) || !b.acquire(6) {
		t.Fatal("4 + 6 bytes within a 10-byte budget were refused")
	}
	if b.acquire(1) {
		t.Fatal("an 11th byte was taken from a full 10-byte budget")
	}
	if got := b.used.Load(); got != 10 {
		t.Fatalf("used %d after a refused acquire, want 10", got)
	}
	b.release(6)
	if got := b.used.Load(); got != 4 {
		t.Fatalf("used %d after releasing 6 of 10, want 4", got)
	}
	b.release(4)
	if !b.acquire(25) {
		t.Fatal("a reply alone was refused: it must always be sent")
	}
	b.release(25)
	if got := b.used.Load(); got != 0 {
		t.Fatalf("used %d after releasing everything, want 0", got)
	}
}

// TestReplyBudgetOption: a configured budget is kept, the zero value is
// the default, and the encoding slots are max(2, GOMAXPROCS).
func TestReplyBudgetOption(t *testing.T) {
	st := store.NewMemory(store.Options{})
	for _, tc := range []struct{ opt, want int64 }{{0, 512 << 20}, {-1, 512 << 20}, {1000, 1000}} {
		s, err := New(st, Options{MaxReplyBytes: tc.opt})
		if err != nil {
			t.Fatal(err)
		}
		if s.replies.limit != tc.want {
			t.Errorf("MaxReplyBytes %d: budget %d, want %d", tc.opt, s.replies.limit, tc.want)
		}
		if s.slots.Cap() < 2 {
			t.Errorf("%d encoding slots, want at least 2", s.slots.Cap())
		}
	}
}
