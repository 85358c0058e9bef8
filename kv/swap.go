package kv

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
)

// A Replacement is a store's next content, built aside while the store
// keeps serving its current one, then swapped in whole by Store.Swap. A
// replica loads a leader's snapshot this way, so that it never serves
// less than it had: a snapshot cut or refused half-way is dropped with
// Abort and changes nothing, neither in memory nor in the AOF.
//
// With an AOF the replacement is also written aside, to SwapName in the
// data directory (magic, one record per loaded payload, the position
// last), and fsynced before the swap renames it over the AOF: a crash at
// any point leaves either the old file whole or the new one. A stale
// SwapName left by a crash is overwritten by the next replacement.
//
// A Replacement is used by one goroutine; it holds a second copy of the
// data in memory until the swap (as Redis's repl-diskless-load swapdb).
type Replacement struct {
	s       *Store
	maps    [nShards]map[string]entry
	ops     int64
	f       *os.File // nil for a memory-only store
	path    string
	buf     []byte
	size    int64 // bytes written to f
	ch      chain // of the records framed (the file's own ID)
	scratch []Op
	done    bool
}

// SwapName is the file a replacement is written to beside the AOF.
const SwapName = AOFName + ".swap"

// ErrReplacement is a payload a replacement does not take.
var ErrReplacement = errors.New("kv: bad replacement payload")

// NewReplacement starts an empty replacement of s's content.
func (s *Store) NewReplacement() (*Replacement, error) {
	r := &Replacement{s: s}
	for i := range r.maps {
		r.maps[i] = make(map[string]entry)
	}
	if s.aof == nil {
		return r, nil
	}
	r.path = filepath.Join(filepath.Dir(s.aof.path), SwapName)
	f, err := os.OpenFile(r.path, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o644)
	if err != nil {
		return nil, fmt.Errorf("kv: creating %s: %w", r.path, err)
	}
	r.f = f
	head, ch := newFile()
	r.ch = ch
	r.buf = append(make([]byte, 0, 1<<20), head...)
	return r, nil
}

// Load adds a payload of SET ops (a leader's snapshot frame) to the
// replacement; any other op is refused with ErrReplacement, and a refused
// payload adds nothing.
func (r *Replacement) Load(payload []byte) error {
	if r.done {
		return errors.New("kv: replacement already swapped or aborted")
	}
	ops, err := decodePayload(payload, r.scratch)
	if err != nil {
		return fmt.Errorf("%w: %v", ErrReplacement, err)
	}
	r.scratch = ops[:0]
	for _, op := range ops {
		if op.Code != opSet {
			return fmt.Errorf("%w: op 0x%02x (only SET)", ErrReplacement, op.Code)
		}
	}
	for _, op := range ops {
		k := string(op.Key)
		r.maps[shardOf(k)][k] = entry{val: slices.Clone(op.Val), exp: op.Exp}
	}
	r.ops += int64(len(ops))
	if r.f == nil {
		return nil
	}
	var start int
	r.buf, start = beginFrame(r.buf)
	r.buf = endFrame(append(r.buf, payload...), start, &r.ch)
	if len(r.buf) >= 1<<20 {
		return r.flush()
	}
	return nil
}

func (r *Replacement) flush() error {
	n, err := r.f.Write(r.buf)
	r.size += int64(n)
	r.buf = r.buf[:0]
	if err != nil {
		return fmt.Errorf("kv: writing %s: %w", r.path, err)
	}
	return nil
}

// Ops is the number of SET ops loaded so far.
func (r *Replacement) Ops() int64 { return r.ops }

// Len is the number of distinct keys loaded so far.
func (r *Replacement) Len() int {
	n := 0
	for _, m := range r.maps {
		n += len(m)
	}
	return n
}

// Abort drops the replacement and its file; the store is untouched.
// Safe to call after Swap (it does nothing then).
func (r *Replacement) Abort() {
	if r.done {
		return
	}
	r.done = true
	if r.f != nil {
		r.f.Close()
	}
	if r.path != "" {
		os.Remove(r.path)
	}
	r.maps = [nShards]map[string]entry{}
}

// Swap makes r the store's content with meta as its position (Meta), at
// once for readers: the file is completed and fsynced first, then, with
// every shard locked, renamed over the AOF and the maps switched. On an
// error before the rename the store is unchanged and r is aborted. Writes
// logged but not yet written are superseded (their waiters succeed: the
// new file is durable), and a rewrite in progress is abandoned.
func (s *Store) Swap(r *Replacement, meta []byte) error {
	if r.done || r.s != s {
		return errors.New("kv: swap of a replacement already used or of another store")
	}
	if len(meta) > MaxMetaLen {
		r.Abort()
		return fmt.Errorf("kv: replication position of %d bytes exceeds %d", len(meta), MaxMetaLen)
	}
	if r.f != nil {
		if err := r.finishFile(meta); err != nil {
			r.Abort()
			return err
		}
	}
	a := s.aof
	s.lockAllQuiet()
	defer func() {
		for i := range s.shards {
			s.shards[i].mu.Unlock()
		}
	}()
	if a != nil {
		defer a.mu.Unlock()
		if a.fatal {
			r.Abort()
			return *a.broken.Load()
		}
		if err := os.Rename(r.path, a.path); err != nil {
			r.Abort()
			return fmt.Errorf("kv: renaming %s over the AOF: %w", r.path, err)
		}
		if err := syncDir(filepath.Dir(a.path)); err != nil {
			s.opts.Logf("kv: %v", err) // both files are whole; go on with the new one
		}
	}
	r.done = true
	keys := r.Len()
	for i := range s.shards {
		s.shards[i].replace(r.maps[i])
	}
	r.maps = [nShards]map[string]entry{}
	s.setMeta(meta)
	if s.opts.Tap != nil {
		s.opts.Tap.Diverged() // the history was replaced wholesale
	}
	if a == nil {
		return nil
	}
	if a.rw != nil {
		a.rw.abort = errors.New("kv: the store was replaced")
	}
	a.buf, a.undo = a.buf[:0], a.undo[:0]
	a.done = a.seq
	a.dirty = false
	a.cond.Broadcast()
	nf, err := a.open(a.path)
	if err != nil {
		// Memory and the renamed file agree; only appending is lost.
		e := fmt.Errorf("%w: reopening the swapped-in AOF: %v", ErrDurability, err)
		a.broken.Store(&e)
		a.fatal = true
		return e
	}
	a.f.Close()
	a.f = nf
	a.size, a.baseSize = r.size, r.size
	a.ch, a.goodCh = r.ch, r.ch
	if p := a.broken.Load(); p != nil && !a.fatal {
		a.broken.Store(nil) // a fresh, fsynced file: nothing acknowledged is unsynced
	}
	s.opts.Logf("kv: store replaced: %d keys, AOF %d bytes", keys, r.size)
	return nil
}

// finishFile appends the position, writes, fsyncs and closes the file.
func (r *Replacement) finishFile(meta []byte) error {
	var start int
	r.buf, start = beginFrame(r.buf)
	r.buf = endFrame(AppendMetaOp(r.buf, meta), start, &r.ch)
	if err := r.flush(); err != nil {
		return err
	}
	if err := r.f.Sync(); err != nil {
		return fmt.Errorf("kv: fsync of %s: %w", r.path, err)
	}
	err := r.f.Close()
	r.f = nil
	if err != nil {
		return fmt.Errorf("kv: closing %s: %w", r.path, err)
	}
	return nil
}

// lockAllQuiet locks every shard (ascending, as every writer) and, with
// an AOF, a.mu at a moment when no batch is being written or fsynced: a
// failing batch's undo takes the shard locks, so waiting for it while
// holding them would deadlock. Returns with the shard locks and a.mu held.
// No new batch starts while it waits (quietWait): with one P a writer
// that never paused started the next batch before the woken swap ran,
// and the swap waited as long as the writer wrote.
func (s *Store) lockAllQuiet() {
	a := s.aof
	if a != nil {
		a.mu.Lock()
		a.quietWait++
		a.mu.Unlock()
	}
	for {
		for i := range s.shards {
			s.shards[i].mu.Lock()
		}
		if a == nil {
			return
		}
		a.mu.Lock()
		if !a.flushing && !a.syncing {
			a.quietWait--
			a.cond.Broadcast() // the waiting writers lead again once a.mu is free
			return
		}
		for i := range s.shards {
			s.shards[i].mu.Unlock()
		}
		for a.flushing || a.syncing {
			a.cond.Wait()
		}
		a.mu.Unlock()
	}
}
