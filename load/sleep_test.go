package load

import (
	"context"
	"testing"
	"time"
)

// TestSleeperNeverEarlyNeverLost: waits from 0 to 60 µs (an expiry that
// can come before the wait begins) each end at or after their time, and
// none is lost (a lost expiry would hold its wait until the context's
// end: the wait returns false). The context's end ends a long wait.
func TestSleeperNeverEarlyNeverLost(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	s := newSleeper(ctx)
	defer s.close()
	n := 0
	for i := range 2000 {
		at := time.Now().Add(time.Duration(i%61) * time.Microsecond)
		if !s.until(ctx, at) {
			t.Fatalf("wait %d: ended by the context (a lost expiry?)", i)
		}
		if now := time.Now(); now.Before(at) {
			t.Fatalf("wait %d ended %v early", i, at.Sub(now))
		}
		n++
	}
	if n != 2000 {
		t.Fatalf("%d waits, want 2000", n)
	}
	short, stop := context.WithCancel(context.Background())
	s2 := newSleeper(short)
	defer s2.close()
	time.AfterFunc(20*time.Millisecond, stop)
	if s2.until(short, time.Now().Add(time.Hour)) {
		t.Fatal("a wait of an hour returned true after its context ended")
	}
}
