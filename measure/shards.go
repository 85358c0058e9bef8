package measure

import (
	"runtime"
	"sync"
)

// MaxShards bounds ShardCount: past it, a shard's lock is still rarely
// busy (a record holds it for well under a microsecond), and each shard
// of a run's statistics costs its histograms (136 KiB each).
const MaxShards = 16

// ShardCount is how many shards the records of workers goroutines need: twice the CPUs that can run them at once, so that a writer
// rarely finds every shard busy, and never more than there are writers
// or MaxShards.
func ShardCount(workers int) int {
	return max(1, min(workers, 2*runtime.GOMAXPROCS(0), MaxShards))
}

// Shards holds n values of T, each under its own lock, for statistics that
// many goroutines write at once: memory grows with the shards, not with
// the writers, and no single lock serializes them. A writer locks the
// first free shard from its home (TryLock), so with more shards than
// running goroutines it seldom waits; which shard takes a record does not
// matter, as the shards are merged when read.
//
// Shards is safe for concurrent use; a value is only touched between
// Lock and Unlock (or inside Each).
type Shards[T any] struct {
	parts []shardPart[T]
}

type shardPart[T any] struct {
	mu sync.Mutex
	v  T
	_  [64]byte // keeps the next shard's lock off this one's cache line
}

// NewShards returns n shards (at least one), each initialized by init.
func NewShards[T any](n int, init func(*T)) *Shards[T] {
	s := &Shards[T]{parts: make([]shardPart[T], max(n, 1))}
	for i := range s.parts {
		init(&s.parts[i].v)
	}
	return s
}

// Len is the number of shards.
func (s *Shards[T]) Len() int { return len(s.parts) }

// Lock locks a shard, the home-th (modulo Len) if it is free, else the
// next free one; when all are busy it waits for the home one. It returns
// the shard's index for At and Unlock.
func (s *Shards[T]) Lock(home int) int {
	n := len(s.parts)
	h := home % n
	if h < 0 {
		h += n
	}
	for i, k := h, 0; k < n; k++ {
		if s.parts[i].mu.TryLock() {
			return i
		}
		if i++; i == n {
			i = 0
		}
	}
	s.parts[h].mu.Lock()
	return h
}

// At is shard i's value; only while shard i is locked.
func (s *Shards[T]) At(i int) *T { return &s.parts[i].v }

// Unlock unlocks shard i.
func (s *Shards[T]) Unlock(i int) { s.parts[i].mu.Unlock() }

// Each calls f with every shard in turn, each under its lock.
func (s *Shards[T]) Each(f func(v *T)) {
	for i := range s.parts {
		s.parts[i].mu.Lock()
		f(&s.parts[i].v)
		s.parts[i].mu.Unlock()
	}
}
