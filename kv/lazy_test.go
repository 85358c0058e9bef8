package kv

import (
	"testing"
)

// shardMaps counts the shards holding a map.
func shardMaps(s *Store) int {
	n := 0
	for i := range s.shards {
		s.shards[i].mu.RLock()
		if s.shards[i].m != nil {
			n++
		}
		s.shards[i].mu.RUnlock()
	}
	return n
}

// TestUnwrittenStoreHoldsNoMaps: a store makes a shard's map on the
// shard's first write and FLUSHALL lets them all go, so that a `wirebench
// serve` whose KV store no client uses holds none of them (256 maps,
// ~12 kB of live heap, were made by every Open); reads and deletes of an
// unwritten shard answer as an empty one's.
func TestUnwrittenStoreHoldsNoMaps(t *testing.T) {
	s := open(t, Options{})
	if n := shardMaps(s); n != 0 {
		t.Fatalf("a fresh store holds %d shard maps, want 0", n)
	}
	if _, _, ok := s.Get("k"); ok {
		t.Fatal("Get on an empty store found k")
	}
	if n, _, err := s.Del("k"); err != nil || n != 0 {
		t.Fatalf("Del on an empty store = %d, %v", n, err)
	}
	if n := shardMaps(s); n != 0 {
		t.Fatalf("reads and a delete made %d shard maps, want 0", n)
	}
	mustSet(t, s, "k", "v", 0)
	if n := shardMaps(s); n != 1 {
		t.Fatalf("one Set made %d shard maps, want 1", n)
	}
	wantVal(t, s, "k", "v")
	if _, err := s.FlushAll(); err != nil {
		t.Fatal(err)
	}
	if n := shardMaps(s); n != 0 || s.Len() != 0 {
		t.Fatalf("after FLUSHALL: %d shard maps, %d keys; want 0, 0", n, s.Len())
	}
	mustSet(t, s, "k", "w", 0)
	wantVal(t, s, "k", "w")
}

// TestOpenAllocatesLittle: Open of an in-memory store is a handful of
// allocations (the store, its channel, the expiry goroutine), not one per
// shard (262 before the maps were made on first write).
func TestOpenAllocatesLittle(t *testing.T) {
	allocs := testing.AllocsPerRun(20, func() {
		s, err := Open(Options{})
		if err != nil {
			t.Fatal(err)
		}
		s.Close()
	})
	if allocs > 16 {
		t.Fatalf("Open+Close: %.0f allocations, want at most 16", allocs)
	}
	t.Logf("Open+Close: %.0f allocations", allocs)
}
