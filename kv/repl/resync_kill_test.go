package repl_test

import (
	"bytes"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/wirebench/wirebench/kv"
	"github.com/wirebench/wirebench/kv/repl"
)

// setKeys writes keys [from, to) to the leader, pipelined.
func setKeys(t *testing.T, c *rclient, from, to int) {
	t.Helper()
	val := strings.Repeat("v", 100)
	for i := from; i < to; i++ {
		c.send("SET", fmt.Sprintf("key:%06d", i), val)
		if (i-from)%500 == 499 || i == to-1 {
			for j := i - (i-from)%500; j <= i; j++ {
				if _, err := c.read(); err != nil {
					t.Fatal(err)
				}
			}
		}
	}
}

func waitFor(t *testing.T, what string, d time.Duration, ok func() bool) {
	t.Helper()
	for deadline := time.Now().Add(d); !ok(); time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("no %s in %v", what, d)
		}
	}
}

// TestLeaderKilledMidResync is issue 34's first reproduction with a real
// leader process: a follower holding 20,000 keys resyncs from a restarted
// leader (a new history) holding 60,000, through a slow link, and the
// leader is killed with SIGKILL while the snapshot streams. The follower
// must keep serving its 20,000 keys (a sampler reads the count without
// pause) and, once a leader is back, hold exactly its 60,000 keys, in
// memory and in its AOF. (Before the fix it served what had arrived of
// the snapshot: 294,480 of 400,000 keys in the run.)
func TestLeaderKilledMidResync(t *testing.T) {
	if testing.Short() {
		t.Skip("starts three leader processes")
	}
	const had, total = 20000, 60000
	dir := t.TempDir()
	l := startLeader(t, dir)
	defer func() { l.kill() }()
	lc, err := rdial(l.resp)
	if err != nil {
		t.Fatal(err)
	}
	lc.do("AUTH", token)
	setKeys(t, lc, 0, had)
	p, err := newProxy(l.http)
	if err != nil {
		t.Fatal(err)
	}
	defer p.close()
	fdir := t.TempDir()
	fst, err := kv.Open(kv.Options{Dir: fdir, Replica: true})
	if err != nil {
		t.Fatal(err)
	}
	defer func() { fst.Close() }()
	var logMu lockedLog
	f, err := repl.StartFollower(fst, repl.FollowerOptions{Leader: "http://" + p.addr(), Token: token, MaxBackoff: 200 * time.Millisecond,
		Logf: logMu.logf})
	if err != nil {
		t.Fatal(err)
	}
	defer func() { f.Close() }()
	waitFor(t, "first sync", 60*time.Second, func() bool { return fst.Len() == had })

	// A new history with more keys: the follower must resync.
	p.cut(true)
	l.kill()
	l = startLeader(t, dir)
	lc.close()
	if lc, err = rdial(l.resp); err != nil {
		t.Fatal(err)
	}
	lc.do("AUTH", token)
	setKeys(t, lc, had, total)
	var minKeys atomic.Int64
	minKeys.Store(had)
	stop := make(chan struct{})
	samples := make(chan int)
	go func() {
		n := 0
		for {
			select {
			case <-stop:
				samples <- n
				return
			default:
			}
			if k := int64(fst.Len()); k < minKeys.Load() {
				minKeys.Store(k)
			}
			n++
		}
	}()
	resyncs := f.Status().Resyncs
	p.set(func(p *proxy) { p.target, p.down, p.delay = l.http, false, 2*time.Millisecond }) // ~2 MB/s
	waitFor(t, "resync start", 60*time.Second, func() bool { s := f.Status(); return s.Syncing && s.Resyncs > resyncs })
	time.Sleep(300 * time.Millisecond) // part of the ~7 MB snapshot is loaded aside
	l.kill()
	waitFor(t, "the cut snapshot's error", 60*time.Second, func() bool { return strings.Contains(f.Status().LastError, "snapshot") })
	afterCut, cutErr := fst.Len(), f.Status().LastError

	l = startLeader(t, dir) // a third history, same 60,000 keys
	lc.close()
	if lc, err = rdial(l.resp); err != nil {
		t.Fatal(err)
	}
	lc.do("AUTH", token)
	p.set(func(p *proxy) { p.target, p.delay = l.http, 0 })
	want := leaderPos(t, lc)
	waitFor(t, "resync with the third leader", 120*time.Second, func() bool { return f.Status().Pos.ID == want.ID })
	close(stop)
	n := <-samples
	t.Logf("had %d keys; after the leader was killed mid-snapshot (%s): %d; fewest served at any time: %d (%d samples); after a good resync: %d (leader %d)",
		had, cutErr, afterCut, minKeys.Load(), n, fst.Len(), total)
	if afterCut != had || minKeys.Load() < had {
		t.Fatalf("the follower served fewer keys than it had: %d after the cut, %d at the fewest (had %d)\n%s", afterCut, minKeys.Load(), had, logMu.String())
	}
	ld := leaderData(t, lc)
	if len(ld) != total || fst.Len() != total {
		t.Fatalf("leader %d keys, follower %d, want %d", len(ld), fst.Len(), total)
	}
	f.Close()
	fst.Close()
	if fst, err = kv.Open(kv.Options{Dir: fdir, Replica: true}); err != nil {
		t.Fatal(err)
	}
	if fst.Len() != total || !bytes.HasPrefix(fst.Meta(), []byte(want.ID)) {
		t.Fatalf("reopened follower: %d keys, meta %q", fst.Len(), fst.Meta())
	}
}

// lockedLog keeps the follower's log for a failure message.
type lockedLog struct {
	mu    sync.Mutex
	lines []string
}

func (l *lockedLog) logf(format string, args ...any) {
	l.mu.Lock()
	l.lines = append(l.lines, fmt.Sprintf(format, args...))
	l.mu.Unlock()
}

func (l *lockedLog) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return strings.Join(l.lines, "\n")
}

// TestFollowerKilledMidResync: the follower process is killed with
// SIGKILL while it loads a snapshot aside; restarted on its data
// directory it serves its old keys at once (its AOF was never touched),
// never fewer, and then resyncs to the leader's.
func TestFollowerKilledMidResync(t *testing.T) {
	if testing.Short() {
		t.Skip("starts leader and follower processes")
	}
	const had, total = 20000, 60000
	ldir, fdir := t.TempDir(), t.TempDir()
	l := startLeader(t, ldir)
	defer func() { l.kill() }()
	lc, err := rdial(l.resp)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { lc.close() }()
	lc.do("AUTH", token)
	setKeys(t, lc, 0, had)
	p, err := newProxy(l.http)
	if err != nil {
		t.Fatal(err)
	}
	defer p.close()
	env := []string{followerEnv + "=http://" + p.addr(), followerEnv + "_DIR=" + fdir}
	f := startChild(t, env...)
	defer func() { f.kill() }()
	dbsize := func(addr string) func() int64 {
		c, err := rdial(addr)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(c.close)
		c.do("AUTH", token)
		return func() int64 {
			v, err := c.do("DBSIZE")
			if err != nil {
				t.Fatal(err)
			}
			return v.(int64)
		}
	}
	size := dbsize(f.resp)
	waitFor(t, "first sync", 60*time.Second, func() bool { return size() == had })

	p.cut(true)
	l.kill()
	l = startLeader(t, ldir) // a new history with more keys
	lc.close()
	if lc, err = rdial(l.resp); err != nil {
		t.Fatal(err)
	}
	lc.do("AUTH", token)
	setKeys(t, lc, had, total)
	fc, err := rdial(f.resp)
	if err != nil {
		t.Fatal(err)
	}
	fc.do("AUTH", token)
	p.set(func(p *proxy) { p.target, p.down, p.delay = l.http, false, 2*time.Millisecond })
	waitFor(t, "the follower's resync", 60*time.Second, func() bool {
		v, err := fc.do("INFO", "replication")
		return err == nil && strings.Contains(v.(string), "master_sync_in_progress:1")
	})
	time.Sleep(300 * time.Millisecond) // part of the snapshot is loaded aside
	f.kill()
	fc.close()
	p.set(func(p *proxy) { p.delay = 0 })

	f = startChild(t, env...)
	size = dbsize(f.resp)
	first := size()
	fewest, polls := first, 0
	waitFor(t, "resync after the restart", 120*time.Second, func() bool {
		n := size()
		fewest = min(fewest, n)
		polls++
		return n == total
	})
	t.Logf("killed mid-resync holding %d keys: restarted with %d, fewest %d over %d polls, then %d (leader %d)", had, first, fewest, polls, size(), total)
	if first != had || fewest < had {
		t.Fatalf("after a kill mid-resync the follower served %d keys at restart and %d at the fewest, want %d", first, fewest, had)
	}
}
