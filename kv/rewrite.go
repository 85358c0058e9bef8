package kv

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
)

// Default auto-rewrite thresholds (Redis's auto-aof-rewrite-min-size and
// auto-aof-rewrite-percentage).
const (
	DefaultRewriteMinSize = 64 << 20
	DefaultRewritePercent = 100
)

// rewrite is a compaction in progress: frames appended meanwhile are
// copied to buf, to follow the snapshot in the new file.
type rewrite struct {
	buf      []byte
	abort    error // set when a refused batch was undone
	finished bool
	done     chan error
}

// Rewrite starts a background compaction (BGREWRITEAOF) and returns a
// channel that receives its result.
func (s *Store) Rewrite() (<-chan error, error) {
	if s.aof == nil {
		return nil, errors.New("kv: no AOF to rewrite (memory-only store)")
	}
	a := s.aof
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.startRewriteLocked()
}

func (a *aof) startRewriteLocked() (<-chan error, error) {
	if a.rw != nil {
		return nil, ErrRewriteBusy
	}
	if a.fatal {
		return nil, *a.broken.Load()
	}
	rw := &rewrite{done: make(chan error, 1)}
	a.rw = rw
	a.wg.Add(1)
	go func() {
		defer a.wg.Done()
		err := a.runRewrite(rw)
		a.mu.Lock()
		rw.finished = true
		a.rw = nil
		a.cond.Broadcast()
		a.mu.Unlock()
		if err != nil {
			a.s.opts.Logf("kv: AOF rewrite failed: %v", err)
		}
		rw.done <- err
	}()
	return rw.done, nil
}

// maybeRewriteLocked starts a rewrite when the file has grown enough.
func (a *aof) maybeRewriteLocked() {
	o := a.s.opts
	pct := o.RewritePercent
	if pct == 0 {
		pct = DefaultRewritePercent
	}
	minSize := o.RewriteMinSize
	if minSize == 0 {
		minSize = DefaultRewriteMinSize
	}
	if pct < 0 || a.rw != nil || a.fatal || a.closing || a.size < minSize || a.size < a.baseSize+a.baseSize*int64(pct)/100 {
		return
	}
	a.startRewriteLocked() //nolint:errcheck // busy is impossible here: a.rw is nil
}

// runRewrite writes a snapshot of the store to a temporary file without
// blocking writers (one shard's read lock at a time), appends what was
// logged meanwhile, then — holding the AOF lock for only that tail, an
// fsync and a rename — makes it the AOF: temp file, fsync, rename, fsync
// of the directory, so a crash at any point leaves the old or the new
// file whole. Records logged during the snapshot may also be in it:
// every op sets state outright, so replaying them again converges.
func (a *aof) runRewrite(rw *rewrite) (err error) {
	tmp := a.path + ".rewrite"
	f, err := os.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o644)
	if err != nil {
		return fmt.Errorf("kv: creating %s: %w", tmp, err)
	}
	renamed := false
	defer func() {
		if !renamed {
			f.Close()
			os.Remove(tmp)
		}
	}()
	// The new file has its own ID and chain: the snapshot's records, then
	// the tail's (resealed: they were framed for the old file), then the
	// ones appended after the switch.
	head, ch := newFile()
	buf := append(make([]byte, 0, 1<<20), head...)
	if m := a.s.Meta(); m != nil {
		// The replication position first: records logged from now on
		// (in rw.buf) carry their own, later ones.
		var start int
		buf, start = beginFrame(buf)
		buf = endFrame(AppendMetaOp(buf, m), start, &ch)
	}
	written := int64(0)
	flush := func() error {
		n, err := f.Write(buf)
		written += int64(n)
		buf = buf[:0]
		if err != nil {
			return fmt.Errorf("kv: writing %s: %w", tmp, err)
		}
		return nil
	}
	s := a.s
	for i := range s.shards {
		sh := &s.shards[i]
		now := s.now()
		sh.mu.RLock()
		for k, e := range sh.m {
			if e.expired(now) && !s.opts.Replica {
				continue
			}
			var start int
			buf, start = beginFrame(buf)
			buf = endFrame(appendSetOp(buf, k, e.val, e.exp), start, &ch)
		}
		sh.mu.RUnlock()
		if len(buf) >= 1<<20 {
			if err := flush(); err != nil {
				return err
			}
		}
	}
	// Drain what was logged meanwhile without the lock while it is large.
	for {
		a.mu.Lock()
		if rw.abort != nil {
			a.mu.Unlock()
			return fmt.Errorf("kv: rewrite abandoned: %w", rw.abort)
		}
		if len(rw.buf) < 1<<16 {
			break // holding a.mu
		}
		tail := len(buf)
		buf = append(buf, rw.buf...)
		rw.buf = rw.buf[:0]
		a.mu.Unlock()
		ch.reseal(buf[tail:]) // buf is ours: writers go on meanwhile
		if err := flush(); err != nil {
			return err
		}
	}
	defer a.mu.Unlock()
	for a.flushing || a.syncing { // the switch must not race a batch's write or fsync
		a.cond.Wait()
	}
	if rw.abort != nil {
		return fmt.Errorf("kv: rewrite abandoned: %w", rw.abort)
	}
	tail := len(buf)
	buf = append(buf, rw.buf...)
	ch.reseal(buf[tail:]) // under 64 KiB or so: a few microseconds of CRC
	rw.buf = nil
	if err := flush(); err != nil {
		return err
	}
	if err := f.Sync(); err != nil {
		return fmt.Errorf("kv: fsync of %s: %w", tmp, err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("kv: closing %s: %w", tmp, err)
	}
	renamed = true
	if err := os.Rename(tmp, a.path); err != nil {
		os.Remove(tmp)
		return fmt.Errorf("kv: renaming the rewritten AOF: %w", err)
	}
	if err := syncDir(filepath.Dir(a.path)); err != nil {
		// The rename may not be durable, but both files are whole: keep
		// going on the new one, whose content is a superset.
		s.opts.Logf("kv: %v", err)
	}
	nf, err := a.open(a.path)
	if err != nil {
		e := fmt.Errorf("%w: reopening the rewritten AOF: %v", ErrDurability, err)
		a.broken.Store(&e)
		a.fatal = true
		return e
	}
	// The replaced file goes on a goroutine of its own, as redis-server
	// closes its old AOF on a background thread: the rename unlinked it,
	// so this last close frees its blocks, 20-30 ms for a 64 MiB file on
	// ext4, and writers would wait for it on a.mu (with -P 16 SETs a
	// rewrite every 64 MiB stalled every connection, the p99 of the
	// pipelined SET cells).
	old := a.f
	a.wg.Add(1)
	go func() {
		defer a.wg.Done()
		old.Close()
	}()
	a.f = nf
	// Everything appended so far is in the new file, fsynced: settle it.
	a.buf, a.undo = a.buf[:0], a.undo[:0]
	a.done = a.seq
	a.size, a.baseSize = written, written
	a.ch, a.goodCh = ch, ch
	a.dirty = false
	a.rewrites.Add(1)
	a.cond.Broadcast()
	s.opts.Logf("kv: AOF rewritten: %d bytes", written)
	return nil
}
