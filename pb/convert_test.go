package pb

import (
	"testing"
	"time"

	"github.com/wirebench/wirebench/api"
)

// TestFromUser: a user round-trips with its nanoseconds, a zero time as
// an absent timestamp, and the message with its timestamp is one
// allocation (two before: the message, then timestamppb.New).
func TestFromUser(t *testing.T) {
	for _, u := range []api.User{
		{ID: 7, Name: "Ada", Email: "ada@example.com", CreatedAt: time.Date(2025, 1, 2, 3, 4, 5, 123456789, time.UTC)},
		{ID: 8, Name: "Alan"},
	} {
		m := FromUser(&u)
		if (m.CreatedAt == nil) != u.CreatedAt.IsZero() {
			t.Fatalf("user %d: timestamp %v for %v", u.ID, m.CreatedAt, u.CreatedAt)
		}
		var back api.User
		ToUser(m, &back)
		if back != u {
			t.Fatalf("round trip: %+v, want %+v", back, u)
		}
	}
	u := api.User{ID: 1, Name: "Ada", CreatedAt: time.Now()}
	if n := testing.AllocsPerRun(100, func() { _ = FromUser(&u) }); n != 1 {
		t.Errorf("FromUser: %v allocations, want 1", n)
	}
}

// TestUserBufSet: one UserBuf refilled gives each user's message, a zero
// time after a set one leaving no timestamp behind, without allocating.
func TestUserBufSet(t *testing.T) {
	var b UserBuf
	for _, u := range []api.User{
		{ID: 7, Name: "Ada", Email: "ada@example.com", CreatedAt: time.Date(2025, 1, 2, 3, 4, 5, 123456789, time.UTC)},
		{ID: 8, Name: "Alan"},
		{ID: 9, Name: "Grace", CreatedAt: time.Date(1906, 12, 9, 0, 0, 0, 1, time.UTC)},
	} {
		m := b.Set(&u)
		if (m.CreatedAt == nil) != u.CreatedAt.IsZero() {
			t.Fatalf("user %d: timestamp %v for %v", u.ID, m.CreatedAt, u.CreatedAt)
		}
		var back api.User
		ToUser(m, &back)
		if back != u {
			t.Fatalf("refilled: %+v, want %+v", back, u)
		}
	}
	u := api.User{ID: 1, Name: "Ada", CreatedAt: time.Now()}
	if n := testing.AllocsPerRun(100, func() { _ = b.Set(&u) }); n != 0 {
		t.Errorf("UserBuf.Set: %v allocations, want 0", n)
	}
}
