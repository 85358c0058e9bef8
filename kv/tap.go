package kv

import (
	"fmt"
	"slices"
)

// The hooks replication (package kv/repl) needs of the store: a tap that
// sees every change as a record, in an order consistent with the store; a
// snapshot taken at an exact position of that order; and, on a follower,
// Apply, which applies a leader's record and logs it together with an
// opaque position (the replication ID and offset) in one AOF record, so
// that after any crash the follower's data and position agree.

// Tap receives every change of a store.
type Tap interface {
	// Record gets one change as a record payload (kv's op encoding, see
	// aofformat.go). It is called under the locks of the shards the
	// change touches (all of them for FLUSHALL) before the change is
	// visible, so two changes of one key reach Record in the order they
	// were applied. payload is valid only during the call; Record must
	// not block or call back into the store.
	Record(payload []byte)
	// Diverged says that changes already given to Record were undone (a
	// batch the AOF refused): the history is no longer what was tapped.
	Diverged()
	// Active reports whether Record wants changes at all; checked under
	// the changed shards' locks, so a tap that turns active while holding
	// every shard lock (a snapshot) misses nothing after. A server
	// without followers pays one atomic load per write.
	Active() bool
}

// opMeta carries an opaque position (kv/repl's replication ID and
// offset): replay keeps the last one, Meta returns it, and an empty one
// clears it. It is never tapped.
//
//	op:      0x05 META       mlen:uvarint meta
const opMeta = 5

// MaxMetaLen bounds a META op.
const MaxMetaLen = 4096

// AppendSetOp appends a SET op (exp: absolute Unix ms, 0 for none).
func AppendSetOp(b []byte, key string, val []byte, exp int64) []byte {
	return appendSetOp(b, key, val, exp)
}

// AppendFlushAllOp appends a FLUSHALL op.
func AppendFlushAllOp(b []byte) []byte { return append(b, opFlushAll) }

// AppendMetaOp appends a META op; an empty meta clears the position.
func AppendMetaOp(b []byte, meta []byte) []byte {
	b = append(b, opMeta)
	b = appendUvarintLen(b, len(meta))
	return append(b, meta...)
}

func appendUvarintLen(b []byte, n int) []byte {
	for n >= 0x80 {
		b = append(b, byte(n)|0x80)
		n >>= 7
	}
	return append(b, byte(n))
}

// Meta is the last position applied with Apply (or replayed from the
// AOF); nil when there is none.
func (s *Store) Meta() []byte {
	s.tapMu.Lock()
	defer s.tapMu.Unlock()
	return slices.Clone(s.meta)
}

func (s *Store) setMeta(m []byte) {
	s.tapMu.Lock()
	s.meta = slices.Clone(m)
	if len(s.meta) == 0 {
		s.meta = nil
	}
	s.tapMu.Unlock()
}

// tap hands one change to the tap; build appends its ops to a buffer.
// Called under the changed shards' locks.
func (s *Store) tap(build func([]byte) []byte) {
	if !s.opts.Tap.Active() {
		return
	}
	s.tapMu.Lock()
	s.tapBuf = build(s.tapBuf[:0])
	s.opts.Tap.Record(s.tapBuf)
	if cap(s.tapBuf) > 1<<20 {
		s.tapBuf = nil // do not keep one large value's buffer
	}
	s.tapMu.Unlock()
}

// Snapshot copies the store at one position of the tap's order: mark is
// called while every shard is locked for writing (so no change is half
// tapped), the live entries are copied under the same locks, then fn is
// called for each outside them. Writers wait for the copy of the entry
// headers only (values are shared, never modified in place).
func (s *Store) Snapshot(mark func(), fn func(key string, val []byte, exp int64) error) error {
	type kvE struct {
		k string
		e entry
	}
	for i := range s.shards {
		s.shards[i].mu.Lock()
	}
	mark()
	now := s.now()
	n := 0
	for i := range s.shards {
		n += len(s.shards[i].m)
	}
	all := make([]kvE, 0, n)
	for i := range s.shards {
		for k, e := range s.shards[i].m {
			if !e.expired(now) {
				all = append(all, kvE{k, e})
			}
		}
	}
	for i := range s.shards {
		s.shards[i].mu.Unlock()
	}
	for _, x := range all {
		if err := fn(x.k, x.e.val, x.e.exp); err != nil {
			return err
		}
	}
	return nil
}

// Apply applies a record payload received from a leader (ops as a Tap
// got them, or SETs of a snapshot) and sets the position to meta, logging
// both as one AOF record: a crash keeps both or neither. Writes are not
// refused for being read-only (Apply is how a replica is written).
func (s *Store) Apply(payload, meta []byte) (Ticket, error) {
	var ops []Op
	if len(payload) > 0 || len(meta) == 0 { // a position alone needs no op
		var err error
		if ops, err = decodePayload(payload, nil); err != nil {
			return 0, fmt.Errorf("kv: replicated record: %w", err)
		}
	}
	if len(meta) > MaxMetaLen {
		return 0, fmt.Errorf("kv: replication position of %d bytes exceeds %d", len(meta), MaxMetaLen)
	}
	all := false
	idx := make([]int, 0, len(ops))
	for _, op := range ops {
		switch op.Code {
		case opFlushAll:
			all = true
		case opMeta:
			return 0, fmt.Errorf("kv: replicated record: a META op in the payload")
		case opAppend:
			// The tap sends APPEND's result as a SET; an APPEND here would
			// not converge if a record were applied twice.
			return 0, fmt.Errorf("kv: replicated record: an APPEND op in the payload")
		default:
			idx = append(idx, shardOf(string(op.Key)))
		}
	}
	if all {
		idx = idx[:0]
		for i := range s.shards {
			idx = append(idx, i)
		}
	}
	slices.Sort(idx)
	idx = slices.Compact(idx)
	for _, i := range idx { // ascending, as every writer
		s.shards[i].mu.Lock()
	}
	defer func() {
		for _, i := range idx {
			s.shards[i].mu.Unlock()
		}
	}()
	if s.aof != nil {
		if err := s.aof.refusing(); err != nil {
			s.stats.Refused.Add(1)
			return 0, err
		}
	}
	var us []undo
	for _, op := range ops {
		key := string(op.Key)
		sh := &s.shards[shardOf(key)]
		switch op.Code {
		case opFlushAll:
			olds := new([nShards]map[string]entry)
			for i := range s.shards {
				olds[i] = s.shards[i].m
				s.shards[i].replace(nil)
			}
			us = append(us, undo{flush: olds})
			continue
		}
		old, had := sh.m[key]
		us = append(us, undo{sh: sh, key: key, old: old, had: had})
		// An expiry already past is kept, not applied as a deletion: the
		// leader sent it while the key was live, and a later record may
		// act on the key (see Options.Replica).
		switch op.Code {
		case opSet:
			sh.put(key, entry{val: slices.Clone(op.Val), exp: op.Exp})
			s.stats.Writes.Add(1)
		case opDel:
			if had {
				delete(sh.m, key)
				s.stats.Deleted.Add(1)
			}
		case opExpireAt:
			if !had {
				continue
			}
			old.exp = op.Exp
			sh.put(key, old)
		}
	}
	s.setMeta(meta)
	if s.aof == nil {
		return 0, nil
	}
	a := s.aof
	a.mu.Lock()
	var start int
	a.buf, start = beginFrame(a.buf)
	a.buf = append(a.buf, payload...)
	a.buf = AppendMetaOp(a.buf, meta)
	t := a.pushLocked(start, nil, us...)
	a.mu.Unlock()
	return Ticket(t), nil
}
