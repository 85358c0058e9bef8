package kv

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"sync"
	"sync/atomic"
	"time"
)

// FsyncPolicy is when the AOF is fsynced, with Redis's meanings.
type FsyncPolicy string

const (
	// FsyncAlways acknowledges a write once it is fsynced. Concurrent
	// writers share one fsync (group commit).
	FsyncAlways FsyncPolicy = "always"
	// FsyncEverySec acknowledges once written to the operating system and
	// fsyncs once a second: a machine crash loses up to about a second, a
	// process crash nothing.
	FsyncEverySec FsyncPolicy = "everysec"
	// FsyncNo acknowledges once written and leaves fsync to the OS.
	FsyncNo FsyncPolicy = "no"
)

// ParseFsyncPolicy checks a --appendfsync value.
func ParseFsyncPolicy(s string) (FsyncPolicy, error) {
	switch p := FsyncPolicy(s); p {
	case FsyncAlways, FsyncEverySec, FsyncNo:
		return p, nil
	}
	return "", fmt.Errorf("kv: appendfsync %q: want always, everysec or no", s)
}

// File is what the AOF needs of its file; tests inject faults through
// Options.OpenFile.
type File interface {
	io.Writer
	Sync() error
	Truncate(size int64) error
	Close() error
}

// AOFName is the file's name in the data directory.
const AOFName = "appendonly.wbaof"

// undo restores what one logged change replaced, for a batch the file
// refused.
type undo struct {
	sh    *shard
	key   string
	old   entry
	had   bool
	flush *[nShards]map[string]entry // FLUSHALL: the maps it replaced
}

type seqRange struct{ lo, hi uint64 } // inclusive

type aof struct {
	s      *Store
	path   string
	policy FsyncPolicy
	open   func(string) (File, error)

	mu   sync.Mutex
	cond *sync.Cond
	f    File
	size int64  // bytes of f known good (written; fsynced too for always)
	buf  []byte // frames appended and not yet written
	undo []undo // of the frames in buf
	seq  uint64 // last appended
	done uint64 // every seq <= done is settled
	// The file's chain (aofformat.go): past the last frame built (a.buf's
	// included), and past the last one in the good size bytes.
	ch, goodCh chain
	failed     []seqRange
	flushing   bool // one goroutine writes at a time
	syncing    bool // everysec's background fsync is running (writes go on)
	// quietWait counts those waiting for the batch in progress (and
	// everysec's background fsync) to end: the rewrite's switch, Swap
	// (lockAllQuiet) and close. No new batch starts while one waits. With
	// one P the writer that ended a batch, still running, started the next
	// before the woken waiter could take the lock, again and again: the
	// switch waited 35 s to minutes under always, Swap and close as long
	// as the writer wrote. Nobody waits for it holding a shard lock (only
	// Wait does, and writers release theirs before it), so the waiters may
	// take them.
	quietWait int
	dirty     bool // written since the last fsync
	// broken refuses new writes: a failed fsync of acknowledged data
	// (everysec), or a file we could not cut back to its good size.
	broken   atomic.Pointer[error]
	fatal    bool // broken for good
	rw       *rewrite
	closing  bool  // no new rewrites
	baseSize int64 // size after the last rewrite, for auto rewrite

	// The previous batch's arrays, emptied, for the next batch: writers
	// append to a.buf while a batch is written, so without a spare every
	// batch grew fresh arrays (growslice was 4% of a SET's CPU).
	nextBuf  []byte
	nextUndo []undo

	// everysec's fsync off the P (bgsync_linux.go): used by the one
	// background fsync in progress (syncing), closed after tick stops.
	ring    *ringSyncer
	ringOff bool // io_uring refused: f.Sync
	// The rewrite's, beside it (rewriteSync).
	rwRing    *ringSyncer
	rwRingOff bool

	fsyncs, batches, records atomic.Int64
	rewrites                 atomic.Int64
	stop                     chan struct{}
	wg                       sync.WaitGroup
}

func osOpen(path string) (File, error) {
	return os.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
}

// openAOF recovers the store from dir's AOF and opens it for appending.
func openAOF(s *Store, opts Options) (*aof, error) {
	if err := os.MkdirAll(opts.Dir, 0o755); err != nil {
		return nil, fmt.Errorf("kv: data dir: %w", err)
	}
	a := &aof{s: s, path: filepath.Join(opts.Dir, AOFName), policy: opts.Fsync, open: opts.OpenFile, stop: make(chan struct{})}
	if a.policy == "" {
		a.policy = FsyncEverySec
	}
	if _, err := ParseFsyncPolicy(string(a.policy)); err != nil {
		return nil, err
	}
	if a.open == nil {
		a.open = osOpen
	}
	a.cond = sync.NewCond(&a.mu)
	size, ch, version, err := recoverAOF(s, a.path, opts.Repair)
	if err != nil {
		return nil, err
	}
	if a.f, err = a.open(a.path); err != nil {
		return nil, fmt.Errorf("kv: opening AOF: %w", err)
	}
	a.size, a.baseSize = size, size
	a.ch, a.goodCh = ch, ch
	if version != 0 && version != aofVersion {
		// New frames cannot follow an older version's: rewrite the file
		// (temp file, fsync, rename) before anything is appended.
		a.mu.Lock()
		done, err := a.startRewriteLocked()
		a.mu.Unlock()
		if err == nil {
			err = <-done
		}
		if err != nil {
			a.f.Close()
			return nil, fmt.Errorf("kv: upgrading the version %d AOF to version %d: %w", version, aofVersion, err)
		}
		s.opts.Logf("kv: AOF %s: rewritten in format version %d", a.path, aofVersion)
	}
	if size == 0 {
		head, ch := newFile()
		if _, err := a.f.Write(head); err != nil {
			a.f.Close()
			return nil, fmt.Errorf("kv: writing AOF header: %w", err)
		}
		if err := a.f.Sync(); err != nil {
			a.f.Close()
			return nil, fmt.Errorf("kv: syncing AOF header: %w", err)
		}
		if err := syncDir(filepath.Dir(a.path)); err != nil {
			a.f.Close()
			return nil, err
		}
		a.size, a.baseSize = int64(len(head)), int64(len(head))
		a.ch, a.goodCh = ch, ch
	}
	a.wg.Add(1)
	go a.tick()
	return a, nil
}

func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return fmt.Errorf("kv: opening data dir to sync: %w", err)
	}
	defer d.Close()
	if err := d.Sync(); err != nil {
		return fmt.Errorf("kv: syncing data dir: %w", err)
	}
	return nil
}

// refusing is checked under a shard lock before each change.
func (a *aof) refusing() error {
	if p := a.broken.Load(); p != nil {
		return *p
	}
	return nil
}

// push numbers and seals the frame being built at the end of a.buf and
// adds it to the bookkeeping. A rewrite in progress gets the frame too,
// or, when state is not nil, a frame of the ops state builds instead: the
// rewrite's tail may replay over a snapshot that already holds the
// change, so it needs ops that set state outright (APPEND logs the
// command; its state is a SET). The rewrite reseals them for its file.
func (a *aof) pushLocked(start int, state func([]byte) []byte, u ...undo) uint64 {
	a.buf = endFrame(a.buf, start, &a.ch)
	if a.rw != nil {
		if state == nil {
			a.rw.buf = append(a.rw.buf, a.buf[start:]...)
		} else {
			var s int
			a.rw.buf, s = beginFrame(a.rw.buf)
			a.rw.buf = state(a.rw.buf)
			binary.LittleEndian.PutUint32(a.rw.buf[s:], uint32(len(a.rw.buf)-s-frameHead)) // sealed by the rewrite
		}
	}
	a.undo = append(a.undo, u...)
	a.seq++
	a.records.Add(1)
	return a.seq
}

// wait settles seq: the first waiter to find no write in progress becomes
// the leader and writes (and for always fsyncs) everything appended so
// far, for all waiters at once — group commit.
func (a *aof) wait(seq uint64, yield bool) error {
	a.mu.Lock()
	defer a.mu.Unlock()
	for a.done < seq {
		if a.flushing || a.fatal || a.quietWait > 0 {
			if a.fatal {
				return a.resultLocked(seq)
			}
			a.cond.Wait()
			continue
		}
		a.leadLocked(yield)
	}
	return a.resultLocked(seq)
}

// leadLocked is the leader's turn: with yield, it yields the CPU once before taking
// the batch, so that the connections the scheduler already woke append
// their writes to this one write() (and, for always, this one fsync)
// instead of each paying its own — redis-server likewise writes the AOF
// once per event-loop turn for all clients. Without the yield a server on
// one CPU wrote once per SET (INFO aof_write_batches == aof_records under
// redis-benchmark -c 50). flushing is held meanwhile, so the others wait
// for this batch and nothing else writes or switches the file.
func (a *aof) leadLocked(yield bool) {
	if yield {
		a.flushing = true
		a.mu.Unlock()
		runtime.Gosched()
		a.mu.Lock()
		a.flushing = false
		if a.quietWait > 0 {
			a.cond.Broadcast() // the waiter's turn; this batch waits for it
			return
		}
	}
	a.flushLocked(a.policy == FsyncAlways)
	a.cond.Broadcast() // flushLocked does not when it found nothing to write
}

func (a *aof) resultLocked(seq uint64) error {
	for i := len(a.failed) - 1; i >= 0; i-- {
		if r := a.failed[i]; seq >= r.lo && seq <= r.hi {
			return fmt.Errorf("%w: write %d was undone", ErrDurability, seq)
		}
	}
	if a.done < seq {
		return fmt.Errorf("%w: %w", ErrDurability, *a.broken.Load()) // errors.Is(err, ErrClosed) after Close
	}
	return nil
}

// flushLocked writes a.buf (and fsyncs when sync) with a.mu released
// during the I/O; a.mu is held on entry and on return.
func (a *aof) flushLocked(sync bool) {
	if len(a.buf) == 0 && !(sync && a.dirty) {
		return
	}
	a.flushing = true
	buf, us, upto, good, ch := a.buf, a.undo, a.seq, a.size, a.ch
	a.buf, a.undo, a.nextBuf, a.nextUndo = a.nextBuf, a.nextUndo, nil, nil
	f := a.f
	a.mu.Unlock()
	var err error
	if len(buf) > 0 {
		var n int
		n, err = writeHolding(f, buf) // holding the CPU (fsync_linux.go)
		if err == nil && n < len(buf) {
			err = io.ErrShortWrite
		}
		if err != nil {
			err = fmt.Errorf("kv: writing AOF: %w", err)
		}
	}
	if err == nil && sync {
		// Holding the CPU (fsync_linux.go): the writers that arrive
		// meanwhile are read after it, together, into the next batch.
		if err = syncHolding(f); err != nil {
			err = fmt.Errorf("kv: fsync of AOF: %w", err)
		}
		a.fsyncs.Add(1)
	}
	if err != nil {
		a.fail(f, good, us, upto, err)
		return
	}
	a.mu.Lock()
	a.batches.Add(1)
	a.size = good + int64(len(buf))
	a.goodCh = ch
	a.dirty = !sync
	a.done = max(a.done, upto)
	a.flushing = false
	if cap(buf) <= 1<<20 { // do not keep a huge batch's array
		a.nextBuf = buf[:0]
	}
	if cap(us) <= 1<<14 {
		clear(us) // drop the references to old values
		a.nextUndo = us[:0]
	}
	a.cond.Broadcast()
	a.maybeRewriteLocked()
}

// fail undoes a refused batch and everything appended after it, so the
// memory holds exactly what the file holds, cuts the file back to its
// good size and settles the undone writes as failed. Called without a.mu;
// returns with it held.
func (a *aof) fail(f File, good int64, us []undo, upto uint64, cause error) {
	s := a.s
	for i := range s.shards { // ascending, as every writer: no cycles
		s.shards[i].mu.Lock()
	}
	a.mu.Lock()
	s.opts.Logf("kv: AOF write refused, undoing %d pending writes: %v", a.seq-a.done, cause)
	if s.opts.Tap != nil {
		s.opts.Tap.Diverged() // replicas got what is undone now
	}
	all := append(us, a.undo...)
	for i := len(all) - 1; i >= 0; i-- {
		u := all[i]
		switch {
		case u.flush != nil:
			for j := range s.shards {
				s.shards[j].replace(u.flush[j])
			}
		case u.had:
			u.sh.put(u.key, u.old)
		default:
			delete(u.sh.m, u.key)
		}
	}
	s.stats.Refused.Add(int64(a.seq - a.done))
	a.failed = append(a.failed, seqRange{a.done + 1, a.seq})
	a.done = a.seq
	a.buf, a.undo = nil, nil
	if a.rw != nil {
		a.rw.abort = cause // its buffer holds undone records
	}
	if err := f.Truncate(good); err != nil {
		// The file may hold the refused bytes: appending after them
		// would put them in the middle. Refuse every write from now on.
		e := fmt.Errorf("%w: %v; cutting it back failed too: %v", ErrDurability, cause, err)
		a.broken.Store(&e)
		a.fatal = true
		s.opts.Logf("kv: %v", e)
	}
	a.size = good
	a.ch = a.goodCh // the frames after good are undone, a.buf's too
	a.flushing = false
	a.cond.Broadcast()
	for i := range s.shards {
		s.shards[i].mu.Unlock()
	}
}

// tick writes and fsyncs once a second for everysec, and writes what
// nobody waits for under the other policies.
func (a *aof) tick() {
	defer a.wg.Done()
	t := time.NewTicker(time.Second)
	defer t.Stop()
	for {
		select {
		case <-a.stop:
			return
		case <-t.C:
		}
		a.mu.Lock()
		if !a.flushing && !a.fatal && a.quietWait == 0 {
			// Settling records marks them acknowledged: under always
			// that needs the fsync, even for this unrequested flush.
			a.flushLocked(a.policy == FsyncAlways)
		}
		if a.policy == FsyncEverySec && !a.syncing && !a.fatal && a.quietWait == 0 {
			a.syncBrokenLocked()
		}
		a.mu.Unlock()
	}
}

// syncBrokenLocked is everysec's answer to a failed fsync of data already
// acknowledged: refuse writes (Redis's MISCONF) until an fsync succeeds.
func (a *aof) syncBrokenLocked() {
	if !a.dirty {
		if a.broken.Load() != nil && !a.fatal {
			a.broken.Store(nil)
			a.s.opts.Logf("kv: AOF fsync works again; accepting writes")
		}
		return
	}
	// Writers keep going during this fsync, as Redis's background fsync:
	// only writes already made are covered, so dirty stays set if more
	// came meanwhile.
	a.syncing = true
	f, size := a.f, a.size
	a.mu.Unlock()
	err := a.backgroundSync(f)
	a.fsyncs.Add(1)
	a.mu.Lock()
	a.syncing = false
	a.cond.Broadcast()
	if f != a.f {
		return // a rewrite replaced the file (fsynced) meanwhile
	}
	if err != nil {
		e := fmt.Errorf("%w: fsync failed: %v", ErrDurability, err)
		a.broken.Store(&e)
		a.s.opts.Logf("kv: %v; refusing writes until an fsync succeeds", e)
		return
	}
	a.dirty = a.size != size
	if a.broken.Load() != nil && !a.fatal {
		a.broken.Store(nil)
		a.s.opts.Logf("kv: AOF fsync works again; accepting writes")
	}
}

func (a *aof) close() error {
	// No rewrite starts from here on: one a batch started between the
	// stop and the wait below would add to the WaitGroup while it is
	// waited on at zero (a panic, "WaitGroup is reused").
	a.mu.Lock()
	a.closing = true
	a.mu.Unlock()
	close(a.stop)
	a.wg.Wait()
	a.closeRing()
	a.mu.Lock()
	a.quietWait++ // never undone: the last batch is ours
	for a.flushing || a.syncing || (a.rw != nil && !a.rw.finished) {
		a.cond.Wait()
	}
	var err error
	if !a.fatal {
		a.flushLocked(a.policy != FsyncNo)
		if p := a.broken.Load(); p != nil {
			err = *p
		}
	}
	a.fatal = true
	e := ErrClosed
	a.broken.Store(&e)
	a.mu.Unlock()
	return errors.Join(err, a.f.Close())
}
