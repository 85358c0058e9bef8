package kv

// How each change becomes an AOF record (and a tap record): one frame per
// change, with the undo entries that take it back if the file refuses it.

// logOp taps one record built by enc, then, with an AOF, appends it as
// one frame with the undo entries that take it back if the write fails.
func (s *Store) logOp(enc func([]byte) []byte, us ...undo) Ticket {
	return s.logCmd(enc, nil, us...)
}

// logCmd is logOp for a change whose ops (cmd) do not set state outright:
// the tap and a rewrite's tail get the ops of state instead (see
// pushLocked). nil state: cmd sets state outright.
func (s *Store) logCmd(cmd, state func([]byte) []byte, us ...undo) Ticket {
	if s.opts.Tap != nil {
		if state != nil {
			s.tap(state)
		} else {
			s.tap(cmd)
		}
	}
	if s.aof == nil {
		return 0
	}
	a := s.aof
	a.mu.Lock()
	var start int
	a.buf, start = beginFrame(a.buf)
	a.buf = cmd(a.buf)
	t := a.pushLocked(start, state, us...)
	a.mu.Unlock()
	return Ticket(t)
}

func (s *Store) logSet(sh *shard, key string, e, old entry, had bool) Ticket {
	return s.logOp(func(b []byte) []byte { return appendSetOp(b, key, e.val, e.exp) },
		undo{sh: sh, key: key, old: old, had: had})
}

// logAppend logs APPEND of val to key, whose entry became e.
func (s *Store) logAppend(sh *shard, key string, val []byte, e, old entry) Ticket {
	return s.logCmd(func(b []byte) []byte { return appendAppendOp(b, key, val, len(e.val), e.exp) },
		func(b []byte) []byte { return appendSetOp(b, key, e.val, e.exp) },
		undo{sh: sh, key: key, old: old, had: true})
}

func (s *Store) logDel(sh *shard, key string, old entry) Ticket {
	return s.logOp(func(b []byte) []byte { return appendDelOp(b, key) },
		undo{sh: sh, key: key, old: old, had: true})
}

func (s *Store) logExpire(sh *shard, key string, e, old entry) Ticket {
	return s.logOp(func(b []byte) []byte { return appendExpireOp(b, key, e.exp) },
		undo{sh: sh, key: key, old: old, had: true})
}

// logMSet logs items as one record; items with Exp < 0 are deletions.
// The shards of idx are locked by the caller.
func (s *Store) logMSet(items []Item, idx []int) Ticket {
	enc := func(b []byte) []byte { return appendItems(b, items) }
	if s.aof == nil {
		return s.logOp(enc) // no undo entries to build
	}
	us := make([]undo, len(items))
	for i, it := range items {
		sh := &s.shards[idx[i]]
		old, had := sh.m[it.Key]
		us[i] = undo{sh: sh, key: it.Key, old: old, had: had}
	}
	return s.logOp(enc, us...)
}

func (s *Store) logFlush(olds *[nShards]map[string]entry) Ticket {
	return s.logOp(func(b []byte) []byte { return append(b, opFlushAll) }, undo{flush: olds})
}

func appendItems(b []byte, items []Item) []byte {
	for _, it := range items {
		if it.Exp < 0 {
			b = appendDelOp(b, it.Key)
		} else {
			b = appendSetOp(b, it.Key, it.Val, it.Exp)
		}
	}
	return b
}
