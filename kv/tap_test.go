package kv

import (
	"errors"
	"fmt"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
)

// recTap keeps every payload it sees, decoded.
type recTap struct {
	off      bool // Active reports false
	mu       sync.Mutex
	recs     [][]Op
	diverged atomic.Int64
}

func (r *recTap) Record(p []byte) {
	ops, err := decodePayload(p, nil)
	if err != nil {
		panic(err)
	}
	for i := range ops { // the payload is only valid during the call
		ops[i].Key, ops[i].Val = []byte(string(ops[i].Key)), []byte(string(ops[i].Val))
	}
	r.mu.Lock()
	r.recs = append(r.recs, ops)
	r.mu.Unlock()
}

func (r *recTap) Diverged() { r.diverged.Add(1) }

func (r *recTap) Active() bool { return !r.off }

func (r *recTap) n() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.recs)
}

func TestTapSeesEveryChange(t *testing.T) {
	for _, dir := range []string{"", t.TempDir()} { // memory only and AOF
		tap := &recTap{}
		s, err := Open(Options{Dir: dir, Tap: tap})
		if err != nil {
			t.Fatal(err)
		}
		s.Set("a", []byte("1"), SetOpts{})
		s.Set("a", []byte("2"), SetOpts{NX: true}) // no change: not tapped
		s.Append("a", []byte("x"))
		s.IncrBy("n", 5)
		s.ExpireAt("a", s.Now()+100000, 0)
		s.Persist("a")
		s.MSet([]Item{{Key: "b", Val: []byte("B")}, {Key: "c", Val: []byte("C"), Exp: 1}})
		s.Del("b", "missing")
		s.GetDel("c")
		s.FlushAll()
		want := []string{"1 a 1", "1 a 1x", "1 n 5", "3 a ", "3 a ", "1 b B|2 c ", "2 b ", "4  "}
		if len(tap.recs) != len(want) {
			t.Fatalf("dir %q: %d records, want %d: %v", dir, len(tap.recs), len(want), tap.recs)
		}
		for i, ops := range tap.recs {
			got := ""
			for j, op := range ops {
				if j > 0 {
					got += "|"
				}
				got += fmt.Sprintf("%d %s %s", op.Code, op.Key, op.Val)
			}
			if got != want[i] {
				t.Errorf("dir %q record %d: %q, want %q", dir, i, got, want[i])
			}
		}
		s.Close()
	}
}

// TestApplyKeepsMeta: what Apply logs comes back after a restart and a
// rewrite, the data and the position together.
func TestApplyKeepsMeta(t *testing.T) {
	dir := t.TempDir()
	s, err := Open(Options{Dir: dir, RewritePercent: -1})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Apply(AppendSetOp(nil, "k", []byte("v1"), 0), []byte("pos 1")); err != nil {
		t.Fatal(err)
	}
	p := AppendSetOp(nil, "k", []byte("v2"), 0)
	p = appendDelOp(p, "gone")
	p = appendExpireOp(p, "k", s.Now()+3600_000)
	if _, err := s.Apply(p, []byte("pos 2")); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Apply(AppendMetaOp(nil, []byte("x")), nil); err == nil {
		t.Fatal("a META op inside a replicated payload was accepted")
	}
	if _, err := s.Apply(nil, make([]byte, MaxMetaLen+1)); err == nil {
		t.Fatal("a position over MaxMetaLen was accepted")
	}
	check := func(when string, s *Store) {
		t.Helper()
		if m := string(s.Meta()); m != "pos 2" {
			t.Errorf("%s: meta %q", when, m)
		}
		if v, exp, ok := s.Get("k"); !ok || string(v) != "v2" || exp == 0 {
			t.Errorf("%s: k = %q exp %d %v", when, v, exp, ok)
		}
	}
	check("live", s)
	s.Close()
	if s, err = Open(Options{Dir: dir, RewritePercent: -1}); err != nil {
		t.Fatal(err)
	}
	check("reopened", s)
	done, err := s.Rewrite()
	if err != nil {
		t.Fatal(err)
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	s.Close()
	if s, err = Open(Options{Dir: dir, RewritePercent: -1}); err != nil {
		t.Fatal(err)
	}
	check("rewritten", s)
	// A flush with an empty position clears it (a resync under way).
	if _, err := s.Apply(AppendFlushAllOp(nil), nil); err != nil {
		t.Fatal(err)
	}
	s.Close()
	if s, err = Open(Options{Dir: dir, RewritePercent: -1}); err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if s.Meta() != nil || s.Len() != 0 {
		t.Fatalf("after a flush with no position: meta %q, %d keys", s.Meta(), s.Len())
	}
}

// TestSnapshotIsExact: under concurrent writers of distinct keys, the
// snapshot holds exactly the keys of the records tapped before its mark.
func TestSnapshotIsExact(t *testing.T) {
	tap := &recTap{}
	s, err := Open(Options{Tap: tap})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	var stop atomic.Bool
	var wg sync.WaitGroup
	for w := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; !stop.Load(); i++ {
				s.Set(strconv.Itoa(w)+"-"+strconv.Itoa(i), []byte("v"), SetOpts{})
			}
		}()
	}
	for i := 0; i < 20 || tap.n() < 2000; i++ { // while the writers write
		marked := -1
		got := 0
		err := s.Snapshot(func() { marked = tap.n() }, func(string, []byte, int64) error { got++; return nil })
		if err != nil {
			t.Fatal(err)
		}
		if got != marked {
			t.Fatalf("snapshot of %d keys at a mark of %d records", got, marked)
		}
	}
	stop.Store(true)
	wg.Wait()
	stop2 := errors.New("stop")
	if err := s.Snapshot(func() {}, func(string, []byte, int64) error { return stop2 }); !errors.Is(err, stop2) {
		t.Fatalf("fn's error: %v", err)
	}
}

// TestTapDivergedOnRefusal: a batch the AOF refuses was tapped already;
// the tap is told.
func TestTapDivergedOnRefusal(t *testing.T) {
	var ff *faultFile
	tap := &recTap{}
	o := faultOpts(t.TempDir(), FsyncAlways, &ff)
	o.Tap = tap
	s, err := Open(o)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	ff.failWrite.Store(true)
	_, tk, err := s.Set("k", []byte("v"), SetOpts{})
	if err == nil {
		err = s.Wait(tk)
	}
	if !errors.Is(err, ErrDurability) || tap.diverged.Load() != 1 {
		t.Fatalf("refused write: %v, diverged %d", err, tap.diverged.Load())
	}
}

// TestReplicaKeepsExpiredUntilDel: on a replica, a record applied after
// its key's expiry time does not delete it — a later record sent while
// the key was live on the leader (PERSIST) brings it back — through
// replay and rewrite too; reads hide it meanwhile, and only a DEL
// removes it. The leader taps its active expiry's deletions.
func TestReplicaKeepsExpiredUntilDel(t *testing.T) {
	now := int64(1_000_000)
	dir := t.TempDir()
	o := Options{Dir: dir, Replica: true, RewritePercent: -1, Now: func() int64 { return now }}
	s, err := Open(o)
	if err != nil {
		t.Fatal(err)
	}
	s.Apply(AppendSetOp(nil, "k", []byte("v"), 0), nil)
	s.Apply(appendExpireOp(nil, "k", now-10), nil) // late: already past
	if _, _, ok := s.Get("k"); ok {
		t.Fatal("an expired key is visible on the replica")
	}
	s.Close()
	if s, err = Open(o); err != nil { // replay keeps it
		t.Fatal(err)
	}
	done, _ := s.Rewrite() // and so does a rewrite
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	s.Close()
	if s, err = Open(o); err != nil {
		t.Fatal(err)
	}
	s.Apply(appendExpireOp(nil, "k", 0), nil) // the PERSIST sent before the expiry
	if v, exp, ok := s.Get("k"); !ok || string(v) != "v" || exp != 0 {
		t.Fatalf("after PERSIST: %q %d %v", v, exp, ok)
	}
	s.Apply(appendDelOp(nil, "k"), nil)
	if s.Len() != 0 {
		t.Fatal("DEL did not remove it")
	}
	s.Close()

	tap := &recTap{}
	l, err := Open(Options{Tap: tap, Now: func() int64 { return now }})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	l.Set("e", []byte("v"), SetOpts{Exp: now + 5})
	now += 10
	l.expireShard(&l.shards[shardOf("e")], now, 64)
	if n := tap.n(); n != 2 || tap.recs[1][0].Code != opDel || string(tap.recs[1][0].Key) != "e" {
		t.Fatalf("active expiry was not tapped as a DEL: %v", tap.recs)
	}
}

func TestInactiveTapGetsNothing(t *testing.T) {
	tap := &recTap{off: true}
	s, err := Open(Options{Tap: tap})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	s.Set("a", []byte("1"), SetOpts{})
	s.Del("a")
	if tap.n() != 0 {
		t.Fatalf("an inactive tap got %d records", tap.n())
	}
	tap.off = false
	s.Set("a", []byte("1"), SetOpts{})
	if tap.n() != 1 {
		t.Fatalf("an active tap got %d records", tap.n())
	}
}
