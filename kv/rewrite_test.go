package kv

import (
	"errors"
	"fmt"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// gatedClose is an AOF file whose Close waits for release, announcing
// itself on entered: the last close of a file a rewrite replaced frees
// its blocks, tens of milliseconds for a large file.
type gatedClose struct {
	*os.File
	entered, release chan struct{}
}

func (g *gatedClose) Close() error {
	close(g.entered)
	<-g.release
	return g.File.Close()
}

// A rewrite's switch to the new file must not make writers wait for the
// replaced file's close: with the close under the AOF's lock, -P 16 SETs
// stalled every connection for 20-30 ms once per 64 MiB written.
func TestRewriteLetsWritersOnWhileTheOldFileCloses(t *testing.T) {
	dir := t.TempDir()
	entered, release := make(chan struct{}), make(chan struct{})
	var opened atomic.Int32
	s := open(t, Options{Dir: dir, Fsync: FsyncAlways, RewritePercent: -1, OpenFile: func(path string) (File, error) {
		f, err := osOpen(path)
		if err != nil || opened.Add(1) != 1 {
			return f, err
		}
		return &gatedClose{File: f.(*os.File), entered: entered, release: release}, nil
	}})
	released := false
	defer func() {
		if !released {
			close(release)
		}
	}()
	for i := range 100 {
		mustSet(t, s, "k"+string(rune('a'+i%26)), "v", 0)
	}
	done, err := s.Rewrite()
	if err != nil {
		t.Fatal(err)
	}
	select {
	case <-entered:
	case <-time.After(20 * time.Second):
		t.Fatal("the rewrite did not close the file it replaced")
	}
	acked := make(chan error, 1)
	go func() {
		_, tk, err := s.Set("after", []byte("switch"), SetOpts{})
		if err == nil {
			err = s.Wait(tk)
		}
		acked <- err
	}()
	select {
	case err := <-acked:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("a write waited for the replaced AOF file's close")
	}
	released = true
	close(release)
	if err := <-done; err != nil {
		t.Fatalf("rewrite: %v", err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	s2 := open(t, Options{Dir: dir})
	if v, _, ok := s2.Get("after"); !ok || string(v) != "switch" {
		t.Fatalf("after restart: %q, %v", v, ok)
	}
	if n := opened.Load(); n != 2 {
		t.Fatalf("%d AOF files opened, want 2 (the first and the rewritten)", n)
	}
}

// gatedSync is the rewrite's new file with an fsync that, while gate is
// set, announces itself on entered and waits for release: a slow disk.
type gatedSync struct {
	*os.File
	gate    *atomic.Bool
	entered chan struct{}
	release chan struct{}
	abort   chan struct{} // closed when the test ends: let everything through
}

func (g *gatedSync) Sync() error {
	if g.gate.Load() {
		select {
		case g.entered <- struct{}{}:
			select {
			case <-g.release:
			case <-g.abort:
			}
		case <-g.abort:
		}
	}
	return g.File.Sync()
}

// The rewrite fsyncs its file (megabytes) and the directory without the
// AOF's lock: under a.mu they stalled every connection 2-3 ms per
// rewrite. Writers keep going during both: under everysec acknowledged
// as usual, under always appended (Set returns, Get sees the value)
// and acknowledged once the new file is durable where it belongs.
func TestRewriteFsyncsWithoutBlockingWriters(t *testing.T) {
	for _, pol := range []FsyncPolicy{FsyncEverySec, FsyncAlways} {
		t.Run(string(pol), func(t *testing.T) {
			dir := t.TempDir()
			var gate atomic.Bool
			entered, release, abort := make(chan struct{}), make(chan struct{}), make(chan struct{})
			s := open(t, Options{Dir: dir, Fsync: pol, RewritePercent: -1, OpenFile: func(path string) (File, error) {
				f, err := osOpen(path)
				if err != nil || !strings.HasSuffix(path, ".rewrite") {
					return f, err
				}
				return &gatedSync{File: f.(*os.File), gate: &gate, entered: entered, release: release, abort: abort}, nil
			}})
			t.Cleanup(func() { close(abort) }) // before the store's Close, which waits for the rewrite
			for i := range 200 {
				mustSet(t, s, fmt.Sprint("k", i), "v", 0)
			}
			gate.Store(true)
			done, err := s.Rewrite()
			if err != nil {
				t.Fatal(err)
			}
			inFsync := func(what string) {
				t.Helper()
				select {
				case <-entered:
				case err := <-done:
					t.Fatalf("the rewrite ended (%v) without the %s fsync of its file", err, what)
				case <-time.After(20 * time.Second):
					t.Fatalf("no %s fsync of the rewrite's file", what)
				}
			}
			// set writes k in a goroutine, so that a Set blocked on the
			// lock fails the test instead of hanging it: appended closes
			// once Set returned, acked receives the acknowledgement.
			set := func(k string) (appended <-chan struct{}, acked <-chan error) {
				app, ack := make(chan struct{}), make(chan error, 1)
				go func() {
					_, tk, err := s.Set(k, []byte("x"), SetOpts{})
					close(app)
					if err == nil {
						err = s.Wait(tk)
					}
					ack <- err
				}()
				return app, ack
			}
			waitAck := func(acked <-chan error, what string) {
				t.Helper()
				select {
				case err := <-acked:
					if err != nil {
						t.Fatal(err)
					}
				case <-time.After(20 * time.Second):
					t.Fatalf("a write waited for %s", what)
				}
			}

			// The snapshot's fsync: writers are acknowledged meanwhile.
			inFsync("snapshot's")
			_, acked := set("during-snapshot-fsync")
			waitAck(acked, "the fsync of the rewrite's snapshot")
			if pol == FsyncAlways {
				release <- struct{}{}
				// The switch's fsync of the tail: Set returns at once and
				// the value is readable; the acknowledgement waits for the
				// new file.
				inFsync("switch's")
				appended, acked := set("during-switch-fsync")
				select {
				case <-appended:
				case <-time.After(20 * time.Second):
					t.Fatal("a write waited for the lock during the switch's fsync")
				}
				wantVal(t, s, "during-switch-fsync", "x")
				select {
				case err := <-acked:
					t.Fatalf("under always a write was acknowledged (%v) before the new file it is in was fsynced", err)
				case <-time.After(100 * time.Millisecond):
				}
				gate.Store(false)
				release <- struct{}{}
				waitAck(acked, "the rewrite's end")
			} else {
				gate.Store(false)
				release <- struct{}{}
			}
			select {
			case err := <-done:
				if err != nil {
					t.Fatalf("rewrite: %v", err)
				}
			case <-time.After(20 * time.Second):
				t.Fatal("the rewrite did not end")
			}
			mustSet(t, s, "after", "y", 0)
			if err := s.Close(); err != nil {
				t.Fatal(err)
			}
			s2 := open(t, Options{Dir: dir})
			wantVal(t, s2, "k199", "v")
			wantVal(t, s2, "during-snapshot-fsync", "x")
			if pol == FsyncAlways {
				wantVal(t, s2, "during-switch-fsync", "x")
			}
			wantVal(t, s2, "after", "y")
			if in := s2.Info(); in.AOFSize == 0 {
				t.Fatal("empty AOF after restart")
			}
		})
	}
}

// With one P and a writer that never pauses under always, the rewrite's
// switch must get its turn between two batches: it waited for a moment
// with no batch in progress, and each time the batch ended the writer,
// still on the P, started the next one before the woken rewrite ran (35 s
// to minutes on a busy box, the AOF growing meanwhile). Every write
// acknowledged meanwhile must be in the rewritten file. The writer and
// the bound are quiet_test.go's.
func TestRewriteSwitchNotStarvedByAWriterThatNeverPauses(t *testing.T) {
	for _, gathered := range []bool{true, false} {
		t.Run(fmt.Sprintf("gathered=%v", gathered), func(t *testing.T) {
			dir := t.TempDir()
			s := openOneP(t, dir)
			items := make([]Item, 100)
			for i := range items {
				items[i] = Item{Key: fmt.Sprintf("k%d", i), Val: []byte("v0")}
			}
			tk, err := s.MSet(items) // one fsync, not 100
			if err == nil {
				err = s.Wait(tk)
			}
			if err != nil {
				t.Fatal(err)
			}
			h := startHog(s, gathered)
			h.await(50)
			done, err := s.Rewrite()
			if err != nil {
				t.Fatal(err)
			}
			err = withinBatches(t, s, done, "the rewrite")
			if werr := h.halt(); werr != nil {
				t.Fatalf("writer: %v", werr)
			}
			if err != nil {
				t.Fatal(err)
			}
			if n := s.Info().Rewrites; n != 1 {
				t.Fatalf("%d rewrites, want 1", n)
			}
			last := h.acked.Load()
			if err := s.Close(); err != nil {
				t.Fatal(err)
			}
			wantAcked(t, open(t, Options{Dir: dir}), 1, last)
		})
	}
}

// TestCloseWhileWritesStartRewrites: Close while writers' batches keep
// starting automatic rewrites. A rewrite started between Close's signal
// to stop and its wait for the background work added to that wait as it
// began (a WaitGroup's Add racing its Wait at zero: the race detector's
// report, or a panic); Close now stops rewrites from starting first.
// Every write acknowledged before Close is there after it.
func TestCloseWhileWritesStartRewrites(t *testing.T) {
	for round := range 20 {
		dir := t.TempDir()
		s := open(t, Options{Dir: dir, Fsync: FsyncNo, RewriteMinSize: 1, RewritePercent: 1})
		var acked sync.Map
		var count atomic.Int64
		var wg sync.WaitGroup
		for w := range 2 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for i := 0; ; i++ {
					k := fmt.Sprintf("w%d-%d", w, i)
					_, tk, err := s.Set(k, []byte("v"), SetOpts{})
					if err == nil {
						err = s.Wait(tk)
					}
					if err != nil {
						if !errors.Is(err, ErrClosed) {
							t.Errorf("round %d: Set %s: %v", round, k, err)
						}
						return
					}
					acked.Store(k, true)
					count.Add(1)
				}
			}()
		}
		// Some writes in, and rewrites under way, before Close.
		for deadline := time.Now().Add(time.Minute); count.Load() < int64(20*(round+1)); time.Sleep(50 * time.Microsecond) {
			if time.Now().After(deadline) {
				t.Fatalf("round %d: %d writes acknowledged in a minute", round, count.Load())
			}
		}
		if err := s.Close(); err != nil {
			t.Fatalf("round %d: Close: %v", round, err)
		}
		wg.Wait()
		r := open(t, Options{Dir: dir, Fsync: FsyncNo, RewritePercent: -1})
		n := 0
		acked.Range(func(k, _ any) bool {
			if _, _, ok := r.Get(k.(string)); !ok {
				t.Errorf("round %d: acknowledged %s lost", round, k)
			}
			n++
			return true
		})
		r.Close()
	}
}
