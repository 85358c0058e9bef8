package kv

import (
	"errors"
	"fmt"
	"os"
	"runtime"
	"runtime/debug"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// slowSync is an AOF file whose fsync parks its goroutine for a moment
// first, as a slow disk's: the scheduler runs the others meanwhile. Not
// an *os.File, so the store calls its Sync.
type slowSync struct{ *os.File }

func (f slowSync) Sync() error {
	time.Sleep(time.Millisecond)
	return f.File.Sync()
}

// openOneP opens an always store whose fsyncs park (slowSync) and runs
// the rest of the test on one P with the GC off: its preemption of a
// writer between two batches was a starved waiter's only chance.
func openOneP(t *testing.T, dir string) *Store {
	t.Helper()
	procs := runtime.GOMAXPROCS(1)
	gc := debug.SetGCPercent(-1)
	t.Cleanup(func() {
		runtime.GOMAXPROCS(procs)
		debug.SetGCPercent(gc)
	})
	return open(t, Options{Dir: dir, Fsync: FsyncAlways, RewritePercent: -1, OpenFile: func(path string) (File, error) {
		f, err := osOpen(path)
		if err != nil {
			return nil, err
		}
		return slowSync{f.(*os.File)}, nil
	}})
}

// hog is a writer that never pauses: it SETs k(i%100) = v(i) and waits
// for each write (Wait, or WaitGathered as an event loop), until halted
// or refused.
type hog struct {
	stop  chan struct{}
	done  chan error
	acked atomic.Int64 // the writes acknowledged, in order
}

func startHog(s *Store, gathered bool) *hog {
	h := &hog{stop: make(chan struct{}), done: make(chan error, 1)}
	go func() {
		for i := int64(1); ; i++ {
			select {
			case <-h.stop:
				h.done <- nil
				return
			default:
			}
			_, tk, err := s.Set(fmt.Sprintf("k%d", i%100), []byte(fmt.Sprintf("v%d", i)), SetOpts{})
			if err == nil {
				if gathered {
					err = s.WaitGathered(tk)
				} else {
					err = s.Wait(tk)
				}
			}
			if err != nil {
				h.done <- err
				return
			}
			h.acked.Store(i)
		}
	}()
	h.await(10)
	return h
}

// await lets the writer run until n writes are acknowledged.
func (h *hog) await(n int64) {
	for h.acked.Load() < n {
		runtime.Gosched()
	}
}

// halt stops the writer and returns what stopped it (nil: halted).
func (h *hog) halt() error {
	close(h.stop)
	return <-h.done
}

// wantAcked checks that the writer's acknowledged writes from..to (the
// last 100 at most: it writes 100 keys) are what s holds.
func wantAcked(t *testing.T, s *Store, from, to int64) {
	t.Helper()
	for i := max(from, to-99, 1); i <= to; i++ {
		wantVal(t, s, fmt.Sprintf("k%d", i%100), fmt.Sprintf("v%d", i))
	}
}

// withinBatches waits for done beside a writer that never pauses. What
// waits for a quiet moment needs a few batches' time (with one P the
// writer runs while its fsyncs park it); starved, it saw hundreds to
// thousands go by. The minute is a guard, not a measurement.
func withinBatches(t *testing.T, s *Store, done <-chan error, what string) error {
	t.Helper()
	const maxBatches = 100
	b0, t0 := s.Info().Batches, time.Now()
	guard := time.After(time.Minute)
	for {
		select {
		case err := <-done:
			t.Logf("%s done after %d batches (%v)", what, s.Info().Batches-b0, time.Since(t0))
			return err
		case <-guard:
			return fmt.Errorf("%s did not finish in a minute beside a writer (%d batches)", what, s.Info().Batches-b0)
		case <-time.After(10 * time.Millisecond):
		}
		if n := s.Info().Batches - b0; n > maxBatches {
			return fmt.Errorf("%s is not done after %d batches (%v) beside a writer that never pauses", what, n, time.Since(t0))
		}
	}
}

// With one P and a writer that never pauses, Swap's lockAllQuiet waited
// for a moment with no batch in progress, and each time a batch ended the
// writer, still on the P, started the next one before the woken swap ran:
// a follower's resync could wait as long as its writer kept writing. The
// swap must get its turn after the batch in progress, and what the writer
// had acknowledged after it must survive a restart with the swapped-in
// content and position.
func TestSwapNotStarvedByAWriterThatNeverPauses(t *testing.T) {
	for _, gathered := range []bool{true, false} {
		t.Run(fmt.Sprintf("gathered=%v", gathered), func(t *testing.T) {
			dir := t.TempDir()
			s := openOneP(t, dir)
			r := loadedReplacement(t, s)
			h := startHog(s, gathered)
			done := make(chan error, 1)
			var after atomic.Int64 // acknowledged when the swap returned
			go func() {
				err := s.Swap(r, []byte("pos 2"))
				after.Store(h.acked.Load())
				done <- err
			}()
			err := withinBatches(t, s, done, "the swap")
			if err == nil {
				h.await(after.Load() + 3) // the writer goes on after it
			}
			herr := h.halt()
			if err != nil {
				<-done // the starved swap goes on once the writer stops
				t.Fatal(err)
			}
			if herr != nil {
				t.Fatalf("writer: %v", herr)
			}
			last := h.acked.Load()
			if err := s.Close(); err != nil {
				t.Fatal(err)
			}
			s2 := open(t, Options{Dir: dir})
			if string(s2.Meta()) != "pos 2" {
				t.Fatalf("meta %q after a restart, want pos 2", s2.Meta())
			}
			for i := range 10 {
				wantVal(t, s2, fmt.Sprintf("new:%d", i), fmt.Sprint("v", i))
			}
			// The write in flight when the swap returned may have been
			// superseded by it (appended before); the next ones not.
			wantAcked(t, s2, after.Load()+2, last)
		})
	}
}

// Close waited for a moment with no batch in progress the same way as
// Swap: beside a writer that never pauses it must get its turn after the
// batch in progress, and every write it acknowledged must survive.
func TestCloseNotStarvedByAWriterThatNeverPauses(t *testing.T) {
	for _, gathered := range []bool{true, false} {
		t.Run(fmt.Sprintf("gathered=%v", gathered), func(t *testing.T) {
			dir := t.TempDir()
			s := openOneP(t, dir)
			h := startHog(s, gathered)
			done := make(chan error, 1)
			go func() { done <- s.Close() }()
			err := withinBatches(t, s, done, "Close")
			herr := h.halt()
			if err != nil {
				<-done
				t.Fatal(err)
			}
			// Stopped by the close, or halted.
			if herr != nil && !errors.Is(herr, ErrClosed) && !errors.Is(herr, ErrDurability) {
				t.Fatalf("writer: %v", herr)
			}
			s2 := open(t, Options{Dir: dir})
			wantAcked(t, s2, 1, h.acked.Load())
		})
	}
}

// heldSync is the AOF file whose next fsync, once held, announces itself
// on entered and waits for release, then fails when fail is set.
type heldSync struct {
	*os.File
	hold, fail *atomic.Bool
	entered    chan struct{}
	release    chan struct{}
}

func (f heldSync) Sync() error {
	if f.hold.CompareAndSwap(true, false) {
		f.entered <- struct{}{}
		<-f.release
	}
	if f.fail.Load() {
		return errInjected
	}
	return f.File.Sync()
}

// While a swap waits for the batch in progress (no new batch starts),
// writers go on: Set, MSet and Apply take their shards' locks, append and
// release them before they wait, so the swap can take every shard once
// the batch ends; and a batch that fails takes every shard lock to undo
// itself, which the waiting swap must not hold. A writer that waited for
// the swap holding a shard lock, or a swap that waited holding them,
// fails at a guard (a mutant of each fails here in 30 s).
func TestSwapWaitingBesideWritersAndAFailingBatch(t *testing.T) {
	for _, fail := range []bool{false, true} {
		t.Run(fmt.Sprintf("fail=%v", fail), func(t *testing.T) {
			var hold, failing atomic.Bool
			entered, release := make(chan struct{}), make(chan struct{})
			s, err := Open(Options{Dir: t.TempDir(), Fsync: FsyncAlways, RewritePercent: -1, OpenFile: func(path string) (File, error) {
				f, err := osOpen(path)
				if err != nil {
					return nil, err
				}
				return heldSync{f.(*os.File), &hold, &failing, entered, release}, nil
			}})
			if err != nil {
				t.Fatal(err)
			}
			let := sync.OnceFunc(func() { close(release) })
			t.Cleanup(func() {
				let()
				if !t.Failed() { // failed at a guard, it may be deadlocked
					s.Close()
				}
			})
			r := loadedReplacement(t, s)
			// A batch in progress: its fsync held.
			hold.Store(true)
			_, tk, err := s.Set("first", []byte("1"), SetOpts{})
			if err != nil {
				t.Fatal(err)
			}
			waits := make(chan error, 8)
			go func() { waits <- s.Wait(tk) }()
			waitFor(t, entered, "the batch's fsync")
			swapped := make(chan error, 1)
			go func() { swapped <- s.Swap(r, []byte("pos 2")) }()
			for a, guard := s.aof, time.Now().Add(time.Minute); ; runtime.Gosched() {
				a.mu.Lock()
				n := a.quietWait
				a.mu.Unlock()
				if n == 1 {
					break // the swap waits for the batch
				}
				if time.Now().After(guard) {
					t.Fatal("the swap never waited for the batch in progress")
				}
			}
			// Writers on many shards meanwhile: they append (not held by
			// the swap) and wait.
			appended := make(chan []Ticket, 1)
			go func() {
				var tks []Ticket
				for i := range 3 {
					_, tk, err := s.Set(fmt.Sprintf("w%d", i), []byte("w"), SetOpts{})
					if err != nil {
						t.Error(err)
					}
					tks = append(tks, tk)
				}
				tk, err := s.MSet([]Item{{Key: "m1", Val: []byte("m")}, {Key: "m2", Val: []byte("m")}})
				if err != nil {
					t.Error(err)
				}
				tks = append(tks, tk)
				tk, err = s.Apply(AppendSetOp(nil, "applied", []byte("a"), 0), []byte("pos 1"))
				if err != nil {
					t.Error(err)
				}
				appended <- append(tks, tk)
			}()
			tks := waitFor(t, appended, "the writers' appends while the swap waits")
			for i, tk := range tks {
				go func() {
					if i%2 == 0 {
						waits <- s.Wait(tk)
					} else {
						waits <- s.WaitGathered(tk)
					}
				}()
			}
			failing.Store(fail)
			let()
			if err := waitFor(t, swapped, "the swap"); err != nil {
				t.Fatal(err)
			}
			// Undone with the failed batch, or superseded by the swap.
			for range len(tks) + 1 {
				if err := waitFor(t, waits, "a writer's wait"); (err != nil) != fail {
					t.Fatalf("a writer's wait: %v (the batch failed: %v)", err, fail)
				}
			}
			failing.Store(false)
			if s.Len() != 10 || string(s.Meta()) != "pos 2" {
				t.Fatalf("after the swap: %d keys, meta %q; want the replacement's 10, pos 2", s.Len(), s.Meta())
			}
			mustSet(t, s, "after", "a", 0) // batches start again
		})
	}
}

// loadedReplacement is a replacement for s holding the snapshot of
// snapshotPayloads(10, 5), ready to swap in.
func loadedReplacement(t *testing.T, s *Store) *Replacement {
	t.Helper()
	r, err := s.NewReplacement()
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range snapshotPayloads(10, 5) {
		if err := r.Load(p); err != nil {
			t.Fatal(err)
		}
	}
	return r
}
