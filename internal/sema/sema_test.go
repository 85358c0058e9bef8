package sema

import (
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// TestSemaBoundsAndWakes: many goroutines contend for 3 slots; never more
// than 3 hold one at once, every acquire eventually succeeds (a lost
// hand-off would hang the test), and the count returns to zero.
func TestSemaBoundsAndWakes(t *testing.T) {
	s := New(3)
	var held, peak atomic.Int64
	var wg sync.WaitGroup
	for range 50 {
		wg.Go(func() {
			for range 200 {
				s.Acquire()
				h := held.Add(1)
				for {
					p := peak.Load()
					if h <= p || peak.CompareAndSwap(p, h) {
						break
					}
				}
				if h > 3 {
					t.Errorf("%d holders of 3 slots", h)
				}
				held.Add(-1)
				s.Release()
			}
		})
	}
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(5 * time.Second): // generous: 10,000 acquires take milliseconds
		t.Fatal("acquires still blocked after 5 s: a release lost its hand-off")
	}
	if n := s.n.Load(); n != 0 {
		t.Errorf("count %d after every release, want 0", n)
	}
	if peak.Load() < 2 {
		t.Logf("peak %d holders: the contention never filled the slots", peak.Load())
	}
}

// TestSemaBlocksAtLimit: with every slot held, acquire waits until one is
// released.
func TestSemaBlocksAtLimit(t *testing.T) {
	s := New(2)
	held := make(chan struct{})
	go func() { s.Acquire(); s.Acquire(); close(held) }()
	select {
	case <-held:
	case <-time.After(5 * time.Second): // fail fast rather than hang: mutation testing times out hangs
		t.Fatal("two acquires of 2 free slots blocked")
	}
	got := make(chan struct{})
	go func() { s.Acquire(); close(got) }()
	select {
	case <-got:
		t.Fatal("a third acquire of 2 slots did not wait")
	case <-time.After(50 * time.Millisecond):
	}
	s.Release()
	select {
	case <-got:
	case <-time.After(10 * time.Second):
		t.Fatal("the waiter was not handed the released slot")
	}
	s.Release()
	s.Release()
	if n := s.n.Load(); n != 0 {
		t.Errorf("count %d, want 0", n)
	}
}
