package kv

import (
	"math"
	"slices"
	"strconv"
)

// Ticket identifies a logged write; Wait(t) returns once the write meets
// the AOF's policy (0: nothing to wait for).
type Ticket uint64

// Wait blocks until the write of t is acknowledged by the AOF policy
// (always: fsynced; everysec and no: written to the operating system) and
// returns ErrDurability (wrapped) when the AOF refused it: the write was
// then undone in memory, or, for everysec and no, stays in memory and is
// written when the file recovers.
func (s *Store) Wait(t Ticket) error {
	if t == 0 || s.aof == nil {
		return nil
	}
	return s.aof.wait(uint64(t), true)
}

// WaitGathered is Wait for a caller that has already gathered every
// write it serves into this batch (an event loop, after reading all its
// ready connections): the leader of the group commit does not yield the
// CPU first for other writers to join, which Wait's leader does for
// goroutine-per-connection servers. The yield was 0.4% of an event
// loop's CPU under SET and gathered nothing.
func (s *Store) WaitGathered(t Ticket) error {
	if t == 0 || s.aof == nil {
		return nil
	}
	return s.aof.wait(uint64(t), false)
}

// SetOpts are SET's options; Exp is absolute (Unix ms, 0 for none).
type SetOpts struct {
	Exp             int64
	KeepTTL, NX, XX bool
	Get             bool // return the old value
}

// SetResult is what Set did.
type SetResult struct {
	Old    []byte
	HadOld bool
	Done   bool // false when NX or XX stopped it
}

// lockW locks key's shard for writing and refuses when the AOF is failed.
func (s *Store) lockW(key string) (*shard, error) {
	if err := checkKey(key); err != nil {
		return nil, err
	}
	sh := &s.shards[shardOf(key)]
	sh.mu.Lock()
	if s.aof != nil {
		if err := s.aof.refusing(); err != nil {
			sh.mu.Unlock()
			s.stats.Refused.Add(1)
			return nil, err
		}
	}
	return sh, nil
}

// live returns key's entry unless absent or expired.
func (sh *shard) live(key string, now int64) (entry, bool) {
	e, ok := sh.m[key]
	if ok && e.expired(now) {
		return entry{}, false
	}
	return e, ok
}

// Set stores val under key as Redis's SET with its options.
func (s *Store) Set(key string, val []byte, o SetOpts) (SetResult, Ticket, error) {
	if len(val) > MaxValueLen {
		return SetResult{}, 0, ErrValueLen
	}
	// The copy is made before the shard's lock: under skewed keys the
	// hottest key's writers queue on that lock (go test ./kv -bench
	// SetZipf -cpu 2 -mutexprofile), so it holds only the lookup, the
	// AOF append and the store.
	v := slices.Clone(val)
	sh, err := s.lockW(key)
	if err != nil {
		return SetResult{}, 0, err
	}
	defer sh.mu.Unlock()
	now := s.now()
	old, had := sh.live(key, now)
	r := SetResult{Old: old.val, HadOld: had}
	if (o.NX && had) || (o.XX && !had) {
		return r, 0, nil
	}
	exp := o.Exp
	if o.KeepTTL && had {
		exp = old.exp
	}
	if exp != 0 && exp <= now {
		// Redis accepts a time already past: the key is gone at once.
		return s.delLocked(sh, key, now, r)
	}
	e := entry{val: v, exp: exp}
	t := s.logSet(sh, key, e, old, had)
	sh.put(key, e)
	s.stats.Writes.Add(1)
	r.Done = true
	return r, t, nil
}

func (s *Store) delLocked(sh *shard, key string, now int64, r SetResult) (SetResult, Ticket, error) {
	old, had := sh.m[key]
	var t Ticket
	if had {
		t = s.logDel(sh, key, old)
		delete(sh.m, key)
	}
	r.Done = true
	return r, t, nil
}

// GetDel returns key's value and deletes it.
func (s *Store) GetDel(key string) ([]byte, bool, Ticket, error) {
	sh, err := s.lockW(key)
	if err != nil {
		return nil, false, 0, err
	}
	defer sh.mu.Unlock()
	e, ok := sh.live(key, s.now())
	if !ok {
		return nil, false, 0, nil
	}
	t := s.logDel(sh, key, e)
	delete(sh.m, key)
	s.stats.Deleted.Add(1)
	return e.val, true, t, nil
}

// Append appends val to key's value (creating it) and returns the new
// length.
func (s *Store) Append(key string, val []byte) (int, Ticket, error) {
	sh, err := s.lockW(key)
	if err != nil {
		return 0, 0, err
	}
	defer sh.mu.Unlock()
	old, had := sh.live(key, s.now())
	if len(old.val)+len(val) > MaxValueLen {
		return 0, 0, ErrValueLen
	}
	// append may extend old's array in place: readers of the old slice
	// never look past its length, and nothing else shares the array.
	var t Ticket
	var e entry
	if had {
		e = entry{val: append(old.val, val...), exp: old.exp}
		t = s.logAppend(sh, key, val, e, old) // the command, not the value
	} else {
		e = entry{val: slices.Clone(val)}
		t = s.logSet(sh, key, e, old, had)
	}
	sh.put(key, e)
	s.stats.Writes.Add(1)
	return len(e.val), t, nil
}

// IncrBy adds delta to the integer in key (0 when absent).
func (s *Store) IncrBy(key string, delta int64) (int64, Ticket, error) {
	sh, err := s.lockW(key)
	if err != nil {
		return 0, 0, err
	}
	defer sh.mu.Unlock()
	old, had := sh.live(key, s.now())
	var n int64
	if had {
		if n, err = parseInt(old.val); err != nil {
			return 0, 0, err
		}
	}
	if (delta > 0 && n > math.MaxInt64-delta) || (delta < 0 && n < math.MinInt64-delta) {
		return 0, 0, ErrOverflow
	}
	n += delta
	e := entry{val: strconv.AppendInt(nil, n, 10), exp: old.exp}
	t := s.logSet(sh, key, e, old, had)
	sh.put(key, e)
	s.stats.Writes.Add(1)
	return n, t, nil
}

// parseInt accepts what Redis's string2ll accepts: an optional minus, no
// leading zeros or plus sign or spaces, at most 20 characters.
func parseInt(b []byte) (int64, error) {
	if len(b) == 0 || len(b) > 20 {
		return 0, ErrNotInteger
	}
	if len(b) > 1 && (b[0] == '0' || (b[0] == '-' && b[1] == '0')) {
		return 0, ErrNotInteger
	}
	if b[0] == '+' {
		return 0, ErrNotInteger
	}
	n, err := strconv.ParseInt(string(b), 10, 64)
	if err != nil {
		return 0, ErrNotInteger
	}
	return n, nil
}

// ParseInt is parseInt for the faces (Redis's integer arguments).
func ParseInt(b []byte) (int64, error) { return parseInt(b) }

// Del deletes keys and returns how many existed.
func (s *Store) Del(keys ...string) (int, Ticket, error) {
	n := 0
	var last Ticket
	for _, k := range keys {
		sh, err := s.lockW(k)
		if err != nil {
			return n, last, err
		}
		_, ok := sh.live(k, s.now())
		if old, present := sh.m[k]; present {
			t := s.logDel(sh, k, old)
			delete(sh.m, k)
			last = max(last, t)
		}
		sh.mu.Unlock()
		if ok {
			n++
			s.stats.Deleted.Add(1)
		}
	}
	return n, last, nil
}

// Expire conditions, as Redis 7's EXPIRE options.
const (
	ExpireAlways = iota
	ExpireNX     // only when the key has no expiry
	ExpireXX     // only when it has one
	ExpireGT     // only when the new one is later
	ExpireLT     // only when the new one is earlier
)

// ExpireAt sets key's absolute expiry (Unix ms); a time not in the future
// deletes it. It reports whether the key exists and the condition held.
func (s *Store) ExpireAt(key string, exp int64, cond int) (bool, Ticket, error) {
	sh, err := s.lockW(key)
	if err != nil {
		return false, 0, err
	}
	defer sh.mu.Unlock()
	now := s.now()
	e, ok := sh.live(key, now)
	if !ok {
		return false, 0, nil
	}
	switch cond {
	case ExpireNX:
		ok = e.exp == 0
	case ExpireXX:
		ok = e.exp != 0
	case ExpireGT:
		ok = e.exp != 0 && exp > e.exp // no expiry counts as infinite
	case ExpireLT:
		ok = e.exp == 0 || exp < e.exp
	}
	if !ok {
		return false, 0, nil
	}
	if exp <= now {
		t := s.logDel(sh, key, e)
		delete(sh.m, key)
		s.stats.Deleted.Add(1)
		return true, t, nil
	}
	ne := entry{val: e.val, exp: exp}
	t := s.logExpire(sh, key, ne, e)
	sh.put(key, ne)
	return true, t, nil
}

// Persist removes key's expiry; false when absent or without one.
func (s *Store) Persist(key string) (bool, Ticket, error) {
	sh, err := s.lockW(key)
	if err != nil {
		return false, 0, err
	}
	defer sh.mu.Unlock()
	e, ok := sh.live(key, s.now())
	if !ok || e.exp == 0 {
		return false, 0, nil
	}
	ne := entry{val: e.val}
	t := s.logExpire(sh, key, ne, e)
	sh.put(key, ne)
	return true, t, nil
}

// Item is one key and value of MSet; Exp is absolute (0: none).
type Item struct {
	Key string
	Val []byte
	Exp int64
}

// MSet stores all items at once: one AOF record, so a crash keeps all or
// none, and readers of the shards see all or none.
func (s *Store) MSet(items []Item) (Ticket, error) {
	idx := make([]int, 0, len(items))
	for _, it := range items {
		if err := checkKey(it.Key); err != nil {
			return 0, err
		}
		if len(it.Val) > MaxValueLen {
			return 0, ErrValueLen
		}
		idx = append(idx, shardOf(it.Key))
	}
	order := slices.Clone(idx)
	slices.Sort(order)
	order = slices.Compact(order)
	for _, i := range order { // ascending: no lock-order cycles
		s.shards[i].mu.Lock()
	}
	defer func() {
		for _, i := range order {
			s.shards[i].mu.Unlock()
		}
	}()
	if s.aof != nil {
		if err := s.aof.refusing(); err != nil {
			s.stats.Refused.Add(1)
			return 0, err
		}
	}
	now := s.now()
	for i, it := range items {
		if it.Exp != 0 && it.Exp <= now {
			items[i].Exp = -1 // deleted at once, as SET with a past time
		}
	}
	t := s.logMSet(items, idx)
	for i, it := range items {
		sh := &s.shards[idx[i]]
		if it.Exp < 0 {
			delete(sh.m, it.Key)
			continue
		}
		sh.put(it.Key, entry{val: slices.Clone(it.Val), exp: it.Exp})
	}
	s.stats.Writes.Add(int64(len(items)))
	return t, nil
}

// FlushAll removes every key.
func (s *Store) FlushAll() (Ticket, error) {
	for i := range s.shards {
		s.shards[i].mu.Lock()
	}
	defer func() {
		for i := range s.shards {
			s.shards[i].mu.Unlock()
		}
	}()
	if s.aof != nil {
		if err := s.aof.refusing(); err != nil {
			s.stats.Refused.Add(1)
			return 0, err
		}
	}
	var olds [nShards]map[string]entry
	for i := range s.shards {
		olds[i] = s.shards[i].m
		s.shards[i].replace(nil)
	}
	return s.logFlush(&olds), nil
}
