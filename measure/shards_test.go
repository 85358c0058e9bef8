package measure

import (
	"sync"
	"testing"
)

// TestShardsCountExactly has many goroutines count into few shards: the
// sum is exact, and a busy home shard sends a writer to the next.
func TestShardsCountExactly(t *testing.T) {
	s := NewShards(3, func(n *int64) {})
	const writers, each = 50, 1000
	var wg sync.WaitGroup
	for w := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range each {
				i := s.Lock(w)
				*s.At(i)++
				s.Unlock(i)
			}
		}()
	}
	wg.Wait()
	var sum int64
	s.Each(func(n *int64) { sum += *n })
	if sum != writers*each {
		t.Fatalf("sum %d, want %d", sum, writers*each)
	}

	// Home 1 busy: the writer takes shard 2; all busy: it waits for home.
	i := s.Lock(1)
	if j := s.Lock(1); i != 1 || j != 2 {
		t.Fatalf("locked %d then %d, want 1 then 2", i, j)
	}
	k := s.Lock(-2) // negative homes wrap
	if k != 0 {
		t.Fatalf("home -2 locked %d, want 0", k)
	}
	got := make(chan int)
	go func() { got <- s.Lock(4) }()
	s.Unlock(1) // home of 4 is 1
	if h := <-got; h != 1 {
		t.Fatalf("all busy: locked %d, want the home 1", h)
	}
}

func TestShardCount(t *testing.T) {
	for _, c := range []struct{ workers, max int }{{0, 1}, {1, 1}, {5000, MaxShards}} {
		if n := ShardCount(c.workers); n < 1 || n > c.max {
			t.Errorf("ShardCount(%d) = %d, want 1..%d", c.workers, n, c.max)
		}
	}
}
