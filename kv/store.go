// Package kv is wirebench's key-value store: byte-string values with
// expiry times, sharded behind read-write locks, optionally made durable by
// an append-only file (AOF) with group commit, background compaction and
// recovery. Every face (HTTP in package kvhttp, RESP in package kv/resp)
// serves the same Store.
package kv

import (
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"
)

// Limits.
const (
	// MaxKeyLen is the longest key in bytes (the HTTP contract's limit,
	// applied on every face so that a key written over RESP can be read
	// over HTTP).
	MaxKeyLen = 1024
	// MaxValueLen is the largest value, Redis's proto-max-bulk-len.
	MaxValueLen = 512 << 20
	// nShards spreads keys over this many locks: enough that 50 writers
	// rarely meet on one, and the SCAN cursor's unit.
	nShards = 256
)

// Sentinel errors; faces map them to their own replies.
var (
	ErrKeyLen      = errors.New("kv: key must be 1..1024 bytes")
	ErrValueLen    = errors.New("kv: value exceeds 512 MiB")
	ErrNotInteger  = errors.New("kv: value is not an integer or out of range")
	ErrOverflow    = errors.New("kv: increment or decrement would overflow")
	ErrDurability  = errors.New("kv: the append-only file refused the write")
	ErrClosed      = errors.New("kv: store closed")
	ErrRewriteBusy = errors.New("kv: a rewrite is already in progress")
)

// entry is one value; exp is the absolute expiry in Unix milliseconds, 0
// for none. Values are never modified in place below their length, so a
// reader may keep the slice after the lock is released.
type entry struct {
	val []byte
	exp int64
}

func (e *entry) expired(now int64) bool { return e.exp != 0 && e.exp <= now }

type shard struct {
	mu sync.RWMutex
	// m is nil until the shard's first store (put): reads, deletes and
	// ranges of a nil map are those of an empty one, and a store that is
	// never written holds no map at all. Every `wirebench serve` opens
	// the KV store whether or not a client uses it, and 256 empty maps
	// were live heap the gRPC face's GC marked on every cycle.
	m map[string]entry
	// ttl is false only when m holds no entry with an expiry: set by
	// every store of one (put) and by every replacement of m, cleared by
	// active expiry's scan when it saw all of m and found none, so that
	// the scan skips shards with nothing to expire (redis-server samples
	// only keys with a TTL; ours visited every key ten times a second,
	// 1.1-1.3% of a server's CPU under a load without TTLs). Written
	// under mu; read without it first, so that a shard with nothing to
	// expire is passed over without its lock: on one P the loop, when
	// preempted holding a shard's lock, left the scan waiting on it, and
	// the mutex, starving, then handed the P to the scan at the loop's
	// next unlock (go tool trace: 110 ms of the loop's 5 s runnable but
	// not running under -P 16 SETs).
	ttl atomic.Bool
	_   [32]byte // keep neighbouring locks off one cache line
}

// put stores e under key; sh.mu is held for writing.
func (sh *shard) put(key string, e entry) {
	if e.exp != 0 && !sh.ttl.Load() {
		sh.ttl.Store(true)
	}
	if sh.m == nil {
		sh.m = make(map[string]entry)
	}
	sh.m[key] = e
}

// replace swaps in m whole (nil: empty, a map made by the next put);
// sh.mu is held for writing (or the store is not yet shared).
func (sh *shard) replace(m map[string]entry) {
	sh.m = m
	sh.ttl.Store(true)
}

// Options configures a Store.
type Options struct {
	// Dir holds the AOF; "" keeps the store in memory only.
	Dir string
	// Fsync is the AOF's policy (FsyncEverySec when "").
	Fsync FsyncPolicy
	// Repair truncates the AOF at a corrupt record in the middle instead
	// of refusing to start.
	Repair bool
	// RewriteMinSize and RewritePercent trigger a background rewrite when
	// the AOF is at least RewriteMinSize bytes and has grown by
	// RewritePercent since the last rewrite (Redis's auto-aof-rewrite-*:
	// 64 MiB and 100 when 0; a negative percent turns it off).
	RewriteMinSize int64
	RewritePercent int
	// Logf receives recovery and rewrite messages; nil discards them.
	Logf func(format string, args ...any)
	// OpenFile opens the AOF for appending; tests inject faults with it.
	// nil is the operating system's file.
	OpenFile func(path string) (File, error)
	// Now is the clock in Unix milliseconds (time.Now when nil).
	Now func() int64
	// Tap, when set, sees every change (replication; see tap.go),
	// active expiry's deletions included.
	Tap Tap
	// Replica keeps expired entries (hidden from reads) until a
	// replicated DEL removes them, in memory, replay and rewrite: the
	// leader decides expiry, as for Redis's replicas. A record applied
	// late may still act on a key it expired meanwhile (a PERSIST sent
	// before the expiry): deleting it would lose the key.
	Replica bool
}

// Store is the key-value store. Its methods are safe for concurrent use.
type Store struct {
	shards [nShards]shard
	aof    *aof // nil: memory only
	opts   Options
	now    func() int64
	stats  Stats
	stop   chan struct{}
	wg     sync.WaitGroup
	closed atomic.Bool
	tapMu  sync.Mutex // the tap's buffer and meta
	tapBuf []byte
	meta   []byte // last replication position (tap.go)
}

// Stats are cumulative counters, read with atomic loads.
type Stats struct {
	Gets, Hits, Misses, Writes, Deleted, Expired atomic.Int64
	// Refused counts writes the AOF refused (failed write or fsync).
	Refused atomic.Int64
}

// Open returns a Store, replaying the AOF in opts.Dir when there is one.
func Open(opts Options) (*Store, error) {
	s := &Store{opts: opts, now: opts.Now, stop: make(chan struct{})}
	if s.now == nil {
		s.now = func() int64 { return time.Now().UnixMilli() }
	}
	if s.opts.Logf == nil {
		s.opts.Logf = func(string, ...any) {}
	}
	if opts.Dir != "" {
		a, err := openAOF(s, opts)
		if err != nil {
			return nil, err
		}
		s.aof = a
	}
	if !opts.Replica {
		s.wg.Add(1)
		go s.expireLoop()
	}
	return s, nil
}

// Close stops background work and closes the AOF after writing (and, but
// for FsyncNo, syncing) what is pending.
func (s *Store) Close() error {
	if s.closed.Swap(true) {
		return nil
	}
	close(s.stop)
	s.wg.Wait()
	if s.aof != nil {
		return s.aof.close()
	}
	return nil
}

// Durable reports whether the store has an AOF.
func (s *Store) Durable() bool { return s.aof != nil }

// StatsRef returns the store's counters.
func (s *Store) StatsRef() *Stats { return &s.stats }

// Now is the store's clock in Unix milliseconds.
func (s *Store) Now() int64 { return s.now() }

func shardOf(key string) int {
	// FNV-1a: inline, no allocation, good enough spread for a lock index.
	h := uint32(2166136261)
	for i := 0; i < len(key); i++ {
		h ^= uint32(key[i])
		h *= 16777619
	}
	return int(h % nShards)
}

func checkKey(key string) error {
	if len(key) == 0 || len(key) > MaxKeyLen {
		return fmt.Errorf("%w (got %d)", ErrKeyLen, len(key))
	}
	return nil
}

// Len is the number of keys, expired ones not yet removed included (as
// Redis's DBSIZE).
func (s *Store) Len() int {
	n := 0
	for i := range s.shards {
		sh := &s.shards[i]
		sh.mu.RLock()
		n += len(sh.m)
		sh.mu.RUnlock()
	}
	return n
}

// Get returns the value of key and its expiry (0 for none).
func (s *Store) Get(key string) (val []byte, exp int64, ok bool) {
	sh := &s.shards[shardOf(key)]
	sh.mu.RLock()
	e, ok := sh.m[key]
	sh.mu.RUnlock()
	return s.got(e, ok)
}

// got counts a lookup and applies the expiry. The clock is read only for
// a key that has an expiry: time.Now was 6% of a pipelined GET's CPU.
func (s *Store) got(e entry, ok bool) ([]byte, int64, bool) {
	s.stats.Gets.Add(1)
	if !ok || (e.exp != 0 && e.expired(s.now())) {
		s.stats.Misses.Add(1)
		return nil, 0, false
	}
	s.stats.Hits.Add(1)
	return e.val, e.exp, true
}

// GetBytes is Get for a key in a byte slice, without converting it to a
// string (the RESP hot path: no allocation per GET).
func (s *Store) GetBytes(key []byte) (val []byte, exp int64, ok bool) {
	h := uint32(2166136261)
	for _, c := range key {
		h ^= uint32(c)
		h *= 16777619
	}
	sh := &s.shards[h%nShards]
	sh.mu.RLock()
	e, ok := sh.m[string(key)]
	sh.mu.RUnlock()
	return s.got(e, ok)
}

// Exists reports whether key is present.
func (s *Store) Exists(key string) bool {
	sh := &s.shards[shardOf(key)]
	now := s.now()
	sh.mu.RLock()
	e, ok := sh.m[key]
	sh.mu.RUnlock()
	return ok && !e.expired(now)
}

// Keys calls fn for each live key in shard order (unsorted within a
// shard) until fn returns false.
func (s *Store) Keys(fn func(key string) bool) {
	s.ScanShards(0, nShards, fn)
}

// ScanShards calls fn for the live keys of shards [from, to); it returns
// early when fn returns false. It holds one shard's read lock at a time,
// so fn must not call back into the store's writers.
func (s *Store) ScanShards(from, to int, fn func(key string) bool) {
	now := s.now()
	var keys []string
	for i := max(from, 0); i < min(to, nShards); i++ {
		sh := &s.shards[i]
		keys = keys[:0]
		sh.mu.RLock()
		for k, e := range sh.m {
			if !e.expired(now) {
				keys = append(keys, k)
			}
		}
		sh.mu.RUnlock()
		for _, k := range keys {
			if !fn(k) {
				return
			}
		}
	}
}

// NumShards is the SCAN cursor's range: cursors are shard indexes.
const NumShards = nShards

// expireLoop is active expiry: ten times a second it samples each shard
// and removes expired keys, as Redis's activeExpireCycle, so that keys
// nobody reads again do not stay in memory.
func (s *Store) expireLoop() {
	defer s.wg.Done()
	t := time.NewTicker(100 * time.Millisecond)
	defer t.Stop()
	for {
		select {
		case <-s.stop:
			return
		case <-t.C:
		}
		now := s.now()
		for i := range s.shards {
			s.expireShard(&s.shards[i], now, 64)
		}
	}
}

// expireShard removes up to limit expired keys of sh. Removal needs no
// AOF record: expiry times are absolute, so replay drops them too.
func (s *Store) expireShard(sh *shard, now int64, limit int) {
	if !sh.ttl.Load() {
		return
	}
	sh.mu.Lock()
	defer sh.mu.Unlock()
	seen, kept := 0, false
	for k, e := range sh.m {
		switch {
		case e.expired(now):
			if s.opts.Tap != nil { // replicas delete only what we delete
				s.tap(func(b []byte) []byte { return appendDelOp(b, k) })
			}
			delete(sh.m, k)
			s.stats.Expired.Add(1)
		case e.exp != 0:
			kept = true
		}
		if seen++; seen >= limit*4 {
			return // not all seen: ttl stays
		}
	}
	sh.ttl.Store(kept)
}

// Info is a snapshot of the store's figures for INFO and /metrics.
type Info struct {
	Keys                                int
	Gets, Hits, Misses, Writes, Deleted int64
	Expired, Refused                    int64
	Policy                              FsyncPolicy // "" when memory only
	AOFSize, Fsyncs, Batches, Records   int64
	Rewrites                            int64
	RewriteInProgress                   bool
}

// Info returns the store's figures.
func (s *Store) Info() Info {
	st := &s.stats
	in := Info{Keys: s.Len(), Gets: st.Gets.Load(), Hits: st.Hits.Load(), Misses: st.Misses.Load(),
		Writes: st.Writes.Load(), Deleted: st.Deleted.Load(), Expired: st.Expired.Load(), Refused: st.Refused.Load()}
	if a := s.aof; a != nil {
		a.mu.Lock()
		in.Policy, in.AOFSize, in.RewriteInProgress = a.policy, a.size, a.rw != nil
		a.mu.Unlock()
		in.Fsyncs, in.Batches, in.Records, in.Rewrites = a.fsyncs.Load(), a.batches.Load(), a.records.Load(), a.rewrites.Load()
	}
	return in
}
