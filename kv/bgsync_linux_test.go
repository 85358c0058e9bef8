//go:build linux && (amd64 || arm64)

package kv

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/wirebench/wirebench/internal/testkit"
)

func newRingOrSkip(t *testing.T) *ringSyncer {
	t.Helper()
	u, err := newRingSyncer()
	if err != nil {
		t.Skipf("no io_uring here (everysec falls back to f.Sync): %v", err)
	}
	t.Cleanup(u.close)
	return u
}

// ioWorkers counts this process's io_uring worker threads.
func ioWorkers(t *testing.T) int {
	t.Helper()
	tasks, err := os.ReadDir("/proc/self/task")
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, tk := range tasks {
		comm, err := os.ReadFile(filepath.Join("/proc/self/task", tk.Name(), "comm"))
		if err == nil && strings.HasPrefix(string(comm), "iou-wrk-") {
			n++
		}
	}
	return n
}

// TestRingSyncerFsyncs: the ring's fsync succeeds on a file, again and
// again (one completion per request, the eventfd's leftovers skipped),
// runs on one of io_uring's worker threads (not the caller's), and
// reports the kernel's error as fsync(2) would (EINVAL on a pipe, EBADF
// on a closed descriptor).
func TestRingSyncerFsyncs(t *testing.T) {
	u := newRingOrSkip(t)
	f, err := os.Create(filepath.Join(t.TempDir(), "f"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	for i := range 5 {
		if _, err := f.Write([]byte("some bytes to make the file dirty\n")); err != nil {
			t.Fatal(err)
		}
		if err := u.fsync(int(f.Fd())); err != nil {
			t.Fatalf("fsync %d: %v", i, err)
		}
	}
	if got := u.done.Load(); got != 5 {
		t.Fatalf("%d completions consumed, want 5", got)
	}
	if ioWorkers(t) == 0 {
		t.Fatal("no iou-wrk thread: the fsync did not go to a worker")
	}
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	defer w.Close()
	if err := u.fsync(int(w.Fd())); !errors.Is(err, syscall.EINVAL) {
		t.Fatalf("fsync of a pipe: %v, want EINVAL", err)
	}
	if err := u.fsync(1 << 20); !errors.Is(err, syscall.EBADF) {
		t.Fatalf("fsync of a closed descriptor: %v, want EBADF", err)
	}
	if err := u.fsync(int(f.Fd())); err != nil {
		t.Fatalf("fsync after errors: %v", err)
	}
}

// TestRingRefusalFallsBackToFsync: when the ring refuses the request
// (here EINVAL, as it does for a pipe) the store stops using it and the
// file's own fsync answers; an I/O error would be returned as it is.
func TestRingRefusalFallsBackToFsync(t *testing.T) {
	newRingOrSkip(t)
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	defer w.Close()
	a := &aof{}
	defer a.closeRing()
	if err := a.backgroundSync(w); !errors.Is(err, syscall.EINVAL) {
		t.Fatalf("fsync of a pipe: %v, want f.Sync's EINVAL", err)
	}
	if !a.ringOff {
		t.Fatal("the ring refused the request and is still in use")
	}
	if ringRefused(&os.PathError{Op: "fsync", Err: syscall.EIO}) || ringRefused(syscall.ENOSPC) {
		t.Fatal("an I/O error counted as the ring refusing")
	}
}

// TestEverysecFsyncsThroughTheRing: a store at everysec on real files
// makes its once-a-second fsync through the ring (so the goroutine gives
// its P back meanwhile), and its data is there after a reopen.
func TestEverysecFsyncsThroughTheRing(t *testing.T) {
	newRingOrSkip(t) // skips where the kernel refuses io_uring
	dir := t.TempDir()
	s, err := Open(Options{Dir: dir, Fsync: FsyncEverySec, RewritePercent: -1})
	if err != nil {
		t.Fatal(err)
	}
	before := s.aof.fsyncs.Load()
	mustSet(t, s, "k", "v", 0)
	deadline := time.Now().Add(30 * time.Second) // generous: the tick is 1 s
	for s.aof.fsyncs.Load() == before {
		if time.Now().After(deadline) {
			t.Fatal("no background fsync in 30 s")
		}
		time.Sleep(10 * time.Millisecond)
	}
	// The atomic fsyncs count orders these reads after the tick's writes.
	if s.aof.ring == nil || s.aof.ringOff {
		t.Fatalf("the background fsync did not use the ring (ring %v, off %v)", s.aof.ring != nil, s.aof.ringOff)
	}
	if n := s.aof.ring.done.Load(); n == 0 {
		t.Fatal("the ring completed no fsync")
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	s2 := open(t, Options{Dir: dir, Fsync: FsyncEverySec, RewritePercent: -1})
	if v, _, ok := s2.Get("k"); !ok || string(v) != "v" {
		t.Fatalf("after reopen: %q %v", v, ok)
	}
}

// fsyncStalls makes rounds background fsyncs of 16 MiB of dirty AOF on a
// store with one P while another goroutine (the event loop's stand-in)
// sleeps 50 µs at a time, and returns per fsync its duration and the
// longest that goroutine waited while it ran.
func fsyncStalls(t *testing.T, ringOff bool, rounds int) (fsyncs, stalls []time.Duration) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1))
	s := open(t, Options{Dir: t.TempDir(), Fsync: FsyncEverySec, RewritePercent: -1})
	s.aof.mu.Lock()
	s.aof.ringOff = ringOff
	s.aof.mu.Unlock()
	type span struct{ from, to time.Time }
	var naps []span
	var stop atomic.Bool
	done := make(chan struct{})
	go func() {
		defer close(done)
		for !stop.Load() {
			t0 := time.Now()
			time.Sleep(50 * time.Microsecond)
			naps = append(naps, span{t0, time.Now()})
		}
	}()
	val := make([]byte, 4096)
	var syncs []span
	for range rounds {
		for i := range 4096 {
			if _, _, err := s.Set(fmt.Sprint("k", i), val, SetOpts{}); err != nil {
				t.Fatal(err)
			}
		}
		a := s.aof
		a.mu.Lock()
		a.flushLocked(false)
		a.mu.Unlock()
		time.Sleep(20 * time.Millisecond) // the sampler runs again
		a.mu.Lock()
		if !a.syncing && a.dirty { // else the tick got there first
			t0 := time.Now()
			a.syncBrokenLocked()
			syncs = append(syncs, span{t0, time.Now()})
		}
		a.mu.Unlock()
		time.Sleep(5 * time.Millisecond)
	}
	stop.Store(true)
	<-done
	for _, f := range syncs {
		var worst time.Duration
		for _, n := range naps {
			if n.to.After(f.from) && n.from.Before(f.to) {
				worst = max(worst, n.to.Sub(n.from))
			}
		}
		fsyncs, stalls = append(fsyncs, f.to.Sub(f.from)), append(stalls, worst)
	}
	return fsyncs, stalls
}

func median(d []time.Duration) time.Duration {
	d = slices.Clone(d)
	slices.Sort(d)
	return d[len(d)/2]
}

// TestEverysecFsyncLeavesTheP is the point of the ring: on one P, a
// goroutine that sleeps 50 µs at a time keeps waking during everysec's
// fsync of 16 MiB. Through f.Sync it waited for the whole fsync (10-20
// ms against 9-25 ms fsyncs, on the busy 2-CPU VM); through the ring a
// median of 1.8-2.3 ms. A timing test: it measures wall-clock waits.
func TestEverysecFsyncLeavesTheP(t *testing.T) {
	testkit.NeedTiming(t)
	newRingOrSkip(t)
	base, baseStalls := fsyncStalls(t, true, 5)
	t.Logf("f.Sync: fsyncs %v, the sleeper's longest waits %v", base, baseStalls)
	fsyncs, stalls := fsyncStalls(t, false, 7)
	t.Logf("ring: fsyncs %v, the sleeper's longest waits %v", fsyncs, stalls)
	if len(fsyncs) < 3 {
		t.Fatalf("only %d fsyncs measured", len(fsyncs))
	}
	if f, s := median(fsyncs), median(stalls); s > f/2 {
		t.Fatalf("through the ring the sleeper still waited %v (median) during fsyncs of %v: the fsync held the P", s, f)
	}
}
