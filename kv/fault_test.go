package kv

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// faultFile is the real file with injectable failures: a failed write, a
// short write (half the bytes reach the file), a failed fsync, a failed
// truncate.
type faultFile struct {
	f                                          *os.File
	failWrite, shortWrite, failSync, failTrunc atomic.Bool
}

var errInjected = errors.New("injected fault")

func (ff *faultFile) Write(b []byte) (int, error) {
	if ff.failWrite.Load() {
		return 0, errInjected
	}
	if ff.shortWrite.Load() && len(b) > 1 {
		n, _ := ff.f.Write(b[:len(b)/2])
		return n, errInjected
	}
	return ff.f.Write(b)
}

func (ff *faultFile) Sync() error {
	if ff.failSync.Load() {
		return errInjected
	}
	return ff.f.Sync()
}

func (ff *faultFile) Truncate(n int64) error {
	if ff.failTrunc.Load() {
		return errInjected
	}
	return ff.f.Truncate(n)
}

func (ff *faultFile) Close() error { return ff.f.Close() }

func faultOpts(dir string, pol FsyncPolicy, ff **faultFile) Options {
	return Options{Dir: dir, Fsync: pol, RewritePercent: -1, OpenFile: func(path string) (File, error) {
		f, err := osOpen(path)
		if err != nil {
			return nil, err
		}
		*ff = &faultFile{f: f.(*os.File)}
		return *ff, nil
	}}
}

// acked runs writers that SET unique keys (and INCR a shared counter)
// until stop, and returns what was acknowledged.
func acked(s *Store, stop *atomic.Bool) (map[string]string, *sync.WaitGroup, *sync.Mutex) {
	got := map[string]string{}
	var mu sync.Mutex
	var wg sync.WaitGroup
	for w := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; !stop.Load(); i++ {
				k, v := fmt.Sprint("w", w, "-", i), fmt.Sprint("v", i)
				_, t, err := s.Set(k, []byte(v), SetOpts{})
				if err == nil {
					err = s.Wait(t)
				}
				if err != nil {
					if !errors.Is(err, ErrDurability) {
						panic(err)
					}
					continue
				}
				mu.Lock()
				got[k] = v
				mu.Unlock()
			}
		}()
	}
	return got, &wg, &mu
}

func checkConsistent(t *testing.T, s *Store, dir string, ackd map[string]string) {
	t.Helper()
	mem := snapshot(s)
	for k, v := range ackd {
		if mem[k] != v {
			t.Fatalf("acknowledged %q=%q is %q in memory", k, v, mem[k])
		}
	}
	s.Close()
	s2, err := Open(Options{Dir: dir})
	if err != nil {
		t.Fatalf("reopen: %v", err)
	}
	defer s2.Close()
	disk := snapshot(s2)
	for k, v := range ackd {
		if disk[k] != v {
			t.Fatalf("acknowledged %q=%q is %q after restart", k, v, disk[k])
		}
	}
	if len(disk) != len(mem) {
		t.Fatalf("%d keys in memory, %d after restart: memory kept a refused write or lost one", len(mem), len(disk))
	}
	for k, v := range mem {
		if disk[k] != v {
			t.Fatalf("%q=%q in memory, %q after restart", k, v, disk[k])
		}
	}
}

func TestFaultsRefuseWritesAndKeepStoreConsistent(t *testing.T) {
	cases := []struct {
		name   string
		pol    FsyncPolicy
		inject func(*faultFile, bool)
	}{
		{"failed write, always", FsyncAlways, func(f *faultFile, on bool) { f.failWrite.Store(on) }},
		{"short write, always", FsyncAlways, func(f *faultFile, on bool) { f.shortWrite.Store(on) }},
		{"failed fsync, always", FsyncAlways, func(f *faultFile, on bool) { f.failSync.Store(on) }},
		{"failed write, everysec", FsyncEverySec, func(f *faultFile, on bool) { f.failWrite.Store(on) }},
		{"short write, no", FsyncNo, func(f *faultFile, on bool) { f.shortWrite.Store(on) }},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			var ff *faultFile
			s, err := Open(faultOpts(dir, c.pol, &ff))
			if err != nil {
				t.Fatal(err)
			}
			var stop atomic.Bool
			ackd, wg, mu := acked(s, &stop)
			time.Sleep(20 * time.Millisecond)
			c.inject(ff, true)
			// While the fault lasts every write must be refused.
			_, tk, err := s.Set("during", []byte("x"), SetOpts{})
			if err == nil {
				err = s.Wait(tk)
			}
			if !errors.Is(err, ErrDurability) {
				t.Fatalf("write during the fault: %v, want ErrDurability", err)
			}
			if _, _, ok := s.Get("during"); ok {
				t.Fatal("a refused write stayed in memory")
			}
			time.Sleep(20 * time.Millisecond)
			c.inject(ff, false)
			time.Sleep(20 * time.Millisecond)
			stop.Store(true)
			wg.Wait()
			mu.Lock()
			defer mu.Unlock()
			if s.StatsRef().Refused.Load() == 0 {
				t.Fatal("no write was refused")
			}
			mustSet(t, s, "after", "ok", 0) // the store works again
			ackd["after"] = "ok"
			checkConsistent(t, s, dir, ackd)
		})
	}
}

// TestFailedTruncateRefusesForGood: when the refused bytes cannot be cut
// off, appending after them would corrupt the middle of the file, so
// every later write is refused; a restart recovers what was acknowledged.
func TestFailedTruncateRefusesForGood(t *testing.T) {
	dir := t.TempDir()
	var ff *faultFile
	s, err := Open(faultOpts(dir, FsyncAlways, &ff))
	if err != nil {
		t.Fatal(err)
	}
	mustSet(t, s, "a", "1", 0)
	ff.shortWrite.Store(true)
	ff.failTrunc.Store(true)
	if _, tk, _ := s.Set("b", []byte("2"), SetOpts{}); !errors.Is(s.Wait(tk), ErrDurability) {
		t.Fatal("short write not refused")
	}
	ff.shortWrite.Store(false)
	if _, _, err := s.Set("c", []byte("3"), SetOpts{}); !errors.Is(err, ErrDurability) {
		t.Fatalf("write after a failed truncate: %v, want refused", err)
	}
	checkConsistent(t, s, dir, map[string]string{"a": "1"})
}

// TestEverysecFailedFsyncRefusesUntilRecovered is Redis's MISCONF: data
// already acknowledged could not be fsynced, so writes stop until an
// fsync succeeds.
func TestEverysecFailedFsyncRefusesUntilRecovered(t *testing.T) {
	dir := t.TempDir()
	var ff *faultFile
	s, err := Open(faultOpts(dir, FsyncEverySec, &ff))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	ff.failSync.Store(true)
	mustSet(t, s, "a", "1", 0)
	// The ticker fsyncs once a second; allow 5 s on a loaded machine.
	deadline := time.Now().Add(5 * time.Second)
	for s.aof.refusing() == nil && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	if _, _, err := s.Set("b", []byte("2"), SetOpts{}); !errors.Is(err, ErrDurability) {
		t.Fatalf("write after a failed fsync: %v, want refused", err)
	}
	ff.failSync.Store(false)
	deadline = time.Now().Add(5 * time.Second)
	for s.aof.refusing() != nil && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	mustSet(t, s, "b", "2", 0)
	wantVal(t, s, "a", "1")
}

// syncCounting counts fsyncs and the bytes written since the last one.
type syncCounting struct {
	f        *os.File
	mu       sync.Mutex
	unsynced int
}

func (c *syncCounting) Write(b []byte) (int, error) {
	c.mu.Lock()
	c.unsynced += len(b)
	c.mu.Unlock()
	return c.f.Write(b)
}

func (c *syncCounting) Sync() error {
	c.mu.Lock()
	c.unsynced = 0
	c.mu.Unlock()
	return c.f.Sync()
}
func (c *syncCounting) Truncate(n int64) error { return c.f.Truncate(n) }
func (c *syncCounting) Close() error           { return c.f.Close() }

// TestAlwaysAcksOnlyFsyncedWrites: under always, no write is acknowledged
// while bytes are written and not fsynced — including writes the
// background ticker happened to flush.
func TestAlwaysAcksOnlyFsyncedWrites(t *testing.T) {
	var sc *syncCounting
	s := open(t, Options{Dir: t.TempDir(), Fsync: FsyncAlways, OpenFile: func(p string) (File, error) {
		f, err := osOpen(p)
		if err != nil {
			return nil, err
		}
		sc = &syncCounting{f: f.(*os.File)}
		return sc, nil
	}})
	// One writer (so unsynced bytes after its ack can only be its own),
	// across two ticks (1 s each) so that the ticker's flush lands between
	// an append and its wait.
	deadline := time.Now().Add(2500 * time.Millisecond)
	var wg sync.WaitGroup
	var bad atomic.Int64
	for w := range 1 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; time.Now().Before(deadline); i++ {
				_, tk, err := s.Set(fmt.Sprint(w, "-", i), []byte("v"), SetOpts{})
				if err != nil {
					t.Error(err)
					return
				}
				// Stall between the append and the wait, as a connection
				// that still parses its pipeline: the ticker may flush it.
				time.Sleep(time.Millisecond)
				if err := s.Wait(tk); err != nil {
					t.Error(err)
					return
				}
				sc.mu.Lock()
				if sc.unsynced > 0 {
					bad.Add(1)
				}
				sc.mu.Unlock()
			}
		}()
	}
	wg.Wait()
	if bad.Load() > 0 {
		t.Fatalf("%d acknowledgements while written bytes were not fsynced", bad.Load())
	}
}

// rwFaultFile is the rewrite's new file with one injected failure: the
// first write, or the n-th fsync (and every later one).
type rwFaultFile struct {
	faultFile
	failSyncAt int32
	syncs      atomic.Int32
}

func (r *rwFaultFile) Sync() error {
	if r.failSyncAt > 0 && r.syncs.Add(1) >= r.failSyncAt {
		return errInjected
	}
	return r.faultFile.Sync()
}

// A rewrite whose new file fails to be written or fsynced (the
// snapshot's fsync, or under always the switch's) is abandoned: the
// store goes on with the old file, writers refused nothing, every
// acknowledged write survives a restart, and the next rewrite works.
func TestRewriteFaultsLeaveTheOldFile(t *testing.T) {
	cases := []struct {
		name       string
		pol        FsyncPolicy
		failWrite  bool
		failSyncAt int32
	}{
		{"failed write, always", FsyncAlways, true, 0},
		{"failed first fsync, always", FsyncAlways, false, 1},
		{"failed second fsync, always", FsyncAlways, false, 2},
		{"failed write, everysec", FsyncEverySec, true, 0},
		{"failed fsync, everysec", FsyncEverySec, false, 1},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			var inject atomic.Bool
			var faulty atomic.Int32
			s, err := Open(Options{Dir: dir, Fsync: c.pol, RewritePercent: -1, OpenFile: func(path string) (File, error) {
				f, err := osOpen(path)
				if err != nil || !strings.HasSuffix(path, ".rewrite") || !inject.Load() {
					return f, err
				}
				faulty.Add(1)
				r := &rwFaultFile{faultFile: faultFile{f: f.(*os.File)}, failSyncAt: c.failSyncAt}
				r.failWrite.Store(c.failWrite)
				return r, nil
			}})
			if err != nil {
				t.Fatal(err)
			}
			var stop atomic.Bool
			ackd, wg, mu := acked(s, &stop)
			time.Sleep(20 * time.Millisecond)
			inject.Store(true)
			done, err := s.Rewrite()
			if err != nil {
				t.Fatal(err)
			}
			if err := <-done; !errors.Is(err, errInjected) {
				t.Fatalf("rewrite with a failing new file: %v, want the injected fault", err)
			}
			inject.Store(false)
			time.Sleep(20 * time.Millisecond)
			if done, err = s.Rewrite(); err != nil {
				t.Fatal(err)
			}
			if err := <-done; err != nil {
				t.Fatalf("the rewrite after: %v", err)
			}
			time.Sleep(20 * time.Millisecond)
			stop.Store(true)
			wg.Wait()
			mu.Lock()
			defer mu.Unlock()
			if n := s.StatsRef().Refused.Load(); n != 0 {
				t.Fatalf("%d writes refused: the rewrite's fault reached the store's own", n)
			}
			if in := s.Info(); faulty.Load() != 1 || in.Rewrites != 1 {
				t.Fatalf("%d faulty files, %d rewrites done; want 1 and 1", faulty.Load(), in.Rewrites)
			}
			if _, err := os.Stat(filepath.Join(dir, AOFName+".rewrite")); !os.IsNotExist(err) {
				t.Fatalf("the failed rewrite's file left behind: %v", err)
			}
			checkConsistent(t, s, dir, ackd)
		})
	}
}
