package kv

import (
	"errors"
	"fmt"
	"io/fs"
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
	if a.closing {
		return nil, ErrClosed
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
// logged meanwhile and fsyncs it, all without the AOF lock, until what is
// left is a small tail; then it makes the file the AOF: temp file, fsync,
// rename, fsync of the directory, so a crash at any point leaves the old
// or the new file whole. Records logged during the snapshot may also be
// in it: every op sets state outright, so replaying them again converges.
func (a *aof) runRewrite(rw *rewrite) (err error) {
	tmp := a.path + ".rewrite"
	// Through a.open, as the AOF: opened for appending, the renamed file
	// needs no reopening (and tests inject faults in it).
	if err := os.Remove(tmp); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("kv: removing a stale %s: %w", tmp, err)
	}
	f, err := a.open(tmp)
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
	// Write what was logged meanwhile and fsync, without the lock, until
	// the file is fsynced and what is left is small: the switch then
	// writes and fsyncs only that (the snapshot's fsync, megabytes, took
	// 2-3 ms under the lock). A disk that never catches up gets a few
	// rounds, then a larger tail.
	for round := 0; ; round++ {
		a.mu.Lock()
		if rw.abort != nil {
			a.mu.Unlock()
			return fmt.Errorf("kv: rewrite abandoned: %w", rw.abort)
		}
		if round > 0 && (len(rw.buf) < 1<<16 || round >= 8) {
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
		if err := a.rewriteSync(f); err != nil {
			return fmt.Errorf("kv: fsync of %s: %w", tmp, err)
		}
	}
	// The switch must not race a batch's write or fsync, and gets its
	// turn after the one in progress: no new one starts meanwhile.
	a.quietWait++
	for a.flushing || a.syncing {
		a.cond.Wait()
	}
	a.quietWait--
	a.cond.Broadcast() // the waiting writers lead again once a.mu is free
	if rw.abort != nil {
		a.mu.Unlock()
		return fmt.Errorf("kv: rewrite abandoned: %w", rw.abort)
	}
	tail := len(buf)
	buf = append(buf, rw.buf...)
	ch.reseal(buf[tail:]) // under 64 KiB or so: a few microseconds of CRC
	rw.buf = nil
	if a.policy != FsyncAlways {
		// Acknowledged once written: the tail's write and the rename under
		// the lock (microseconds), so that no write lands in the old file
		// after its records were copied; the tail's fsync is everysec's
		// next (dirty), the directory's after the lock. Until then a
		// machine crash may lose the last records, as everysec may; a
		// process crash finds every acknowledged record at a.path.
		err := flush()
		if err == nil {
			if err = os.Rename(tmp, a.path); err != nil {
				err = fmt.Errorf("kv: renaming the rewritten AOF: %w", err)
			}
		}
		if err != nil {
			a.mu.Unlock()
			return err
		}
		renamed = true
		a.switchLocked(f, ch, written, a.seq, len(a.buf), len(a.undo), true)
		a.mu.Unlock()
		if err := a.rewriteSyncDir(); err != nil {
			// The rename may not be durable, but both files are whole: keep
			// going on the new one, whose content is a superset.
			s.opts.Logf("kv: %v", err)
		}
		s.opts.Logf("kv: AOF rewritten: %d bytes", written)
		return nil
	}
	// always: the tail holds acknowledged records, so the new file is
	// fsynced, renamed and its directory fsynced before anything is
	// acknowledged from it; the lock is not held meanwhile. flushing keeps
	// batches off both files: writers go on appending (to a.buf, framed
	// for the old file), and their acknowledgements wait for the switch,
	// as they would for a batch's fsync.
	upto, bufAt, undoAt := a.seq, len(a.buf), len(a.undo)
	a.flushing = true
	a.mu.Unlock()
	err = flush()
	if err == nil {
		if err = a.rewriteSync(f); err != nil {
			err = fmt.Errorf("kv: fsync of %s: %w", tmp, err)
		}
	}
	if err == nil {
		if err = os.Rename(tmp, a.path); err != nil {
			err = fmt.Errorf("kv: renaming the rewritten AOF: %w", err)
		} else {
			renamed = true
			if derr := a.rewriteSyncDir(); derr != nil {
				s.opts.Logf("kv: %v", derr) // as above
			}
		}
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	a.flushing = false
	a.cond.Broadcast()
	if err != nil {
		return err // the old file goes on, a.buf's records framed for it
	}
	a.switchLocked(f, ch, written, upto, bufAt, undoAt, false)
	s.opts.Logf("kv: AOF rewritten: %d bytes", written)
	return nil
}

// switchLocked makes f, renamed to a.path and holding size bytes that
// end with chain ch, the AOF. Its records are those up to seq upto, a.buf
// before bufAt and a.undo before undoAt; the records appended after them
// are resealed to follow. dirty: f's end is not fsynced yet.
func (a *aof) switchLocked(f File, ch chain, size int64, upto uint64, bufAt, undoAt int, dirty bool) {
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
	a.f = f
	a.goodCh = ch
	n := copy(a.buf, a.buf[bufAt:])
	a.buf = a.buf[:n]
	ch.reseal(a.buf)
	a.ch = ch
	n = copy(a.undo, a.undo[undoAt:])
	clear(a.undo[n:]) // drop the references to old values
	a.undo = a.undo[:n]
	a.done = max(a.done, upto)
	a.size, a.baseSize = size, size
	a.dirty = dirty
	a.rewrites.Add(1)
	a.cond.Broadcast()
}

// rewriteSyncDir fsyncs the AOF's directory as rewriteSync.
func (a *aof) rewriteSyncDir() error {
	d, err := os.Open(filepath.Dir(a.path))
	if err != nil {
		return fmt.Errorf("kv: opening data dir to sync: %w", err)
	}
	defer d.Close()
	if err := a.rewriteSync(d); err != nil {
		return fmt.Errorf("kv: syncing data dir: %w", err)
	}
	return nil
}
