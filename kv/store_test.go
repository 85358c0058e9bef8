package kv

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

func open(t *testing.T, o Options) *Store {
	t.Helper()
	s, err := Open(o)
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

func mustSet(t *testing.T, s *Store, k, v string, exp int64) {
	t.Helper()
	_, tk, err := s.Set(k, []byte(v), SetOpts{Exp: exp})
	if err == nil {
		err = s.Wait(tk)
	}
	if err != nil {
		t.Fatalf("Set(%q): %v", k, err)
	}
}

func wantVal(t *testing.T, s *Store, k, v string) {
	t.Helper()
	got, _, ok := s.Get(k)
	if !ok || string(got) != v {
		t.Fatalf("Get(%q) = %q, %v; want %q", k, got, ok, v)
	}
}

func wantAbsent(t *testing.T, s *Store, k string) {
	t.Helper()
	if got, _, ok := s.Get(k); ok {
		t.Fatalf("Get(%q) = %q; want absent", k, got)
	}
}

func TestSetOptionsAndOps(t *testing.T) {
	now := int64(1_000_000)
	s := open(t, Options{Now: func() int64 { return now }})
	mustSet(t, s, "a", "1", 0)
	if r, _, _ := s.Set("a", []byte("2"), SetOpts{NX: true}); r.Done || !r.HadOld || string(r.Old) != "1" {
		t.Fatalf("SET NX on a present key: %+v", r)
	}
	if r, _, _ := s.Set("b", []byte("2"), SetOpts{XX: true}); r.Done {
		t.Fatalf("SET XX on an absent key: %+v", r)
	}
	wantAbsent(t, s, "b")
	mustSet(t, s, "t", "v", now+100)
	if r, _, _ := s.Set("t", []byte("w"), SetOpts{KeepTTL: true}); !r.Done {
		t.Fatal("SET KEEPTTL")
	}
	if _, exp, _ := s.Get("t"); exp != now+100 {
		t.Fatalf("KEEPTTL lost the expiry: %d", exp)
	}
	now += 100
	wantAbsent(t, s, "t")
	if n, _, err := s.Append("a", []byte("23")); err != nil || n != 3 {
		t.Fatalf("Append = %d, %v", n, err)
	}
	if n, _, err := s.IncrBy("a", 7); err != nil || n != 130 {
		t.Fatalf("IncrBy = %d, %v", n, err)
	}
	mustSet(t, s, "x", "01", 0)
	if _, _, err := s.IncrBy("x", 1); !errors.Is(err, ErrNotInteger) {
		t.Fatalf("IncrBy on 01: %v, want ErrNotInteger", err)
	}
	mustSet(t, s, "m", "9223372036854775807", 0)
	if _, _, err := s.IncrBy("m", 1); !errors.Is(err, ErrOverflow) {
		t.Fatalf("IncrBy past MaxInt64: %v", err)
	}
	if n, _, _ := s.Del("a", "a", "nope"); n != 1 {
		t.Fatalf("Del = %d, want 1", n)
	}
	if _, _, err := s.Set("", nil, SetOpts{}); !errors.Is(err, ErrKeyLen) {
		t.Fatalf("empty key: %v", err)
	}
	long := string(make([]byte, MaxKeyLen+1))
	if _, _, err := s.Set(long, nil, SetOpts{}); !errors.Is(err, ErrKeyLen) {
		t.Fatalf("long key: %v", err)
	}
	if _, _, err := s.Set(long[:MaxKeyLen], nil, SetOpts{}); err != nil {
		t.Fatalf("key of MaxKeyLen: %v", err)
	}
	if ok, _, _ := s.ExpireAt("m", now+50, ExpireGT); ok {
		t.Fatal("EXPIRE GT on a key without expiry must fail (none is infinite)")
	}
	if ok, _, _ := s.ExpireAt("m", now+50, ExpireNX); !ok {
		t.Fatal("EXPIRE NX")
	}
	if ok, _, _ := s.Persist("m"); !ok {
		t.Fatal("PERSIST")
	}
	if ok, _, _ := s.ExpireAt("m", now, ExpireAlways); !ok {
		t.Fatal("EXPIRE in the past")
	}
	wantAbsent(t, s, "m")
}

func TestActiveExpiryRemovesUnreadKeys(t *testing.T) {
	s := open(t, Options{})
	for i := range 100 {
		mustSet(t, s, fmt.Sprint("k", i), "v", s.Now()+20)
	}
	// Generous: the loop runs every 100 ms; on a loaded machine allow 5 s.
	deadline := time.Now().Add(5 * time.Second)
	for s.Len() > 0 && time.Now().Before(deadline) {
		time.Sleep(50 * time.Millisecond)
	}
	if n := s.Len(); n != 0 {
		t.Fatalf("%d keys left after their expiry", n)
	}
}

func TestRecoveryReplaysAndKeepsExpiry(t *testing.T) {
	dir := t.TempDir()
	now := int64(5_000_000)
	clock := func() int64 { return now }
	for _, pol := range []FsyncPolicy{FsyncAlways, FsyncEverySec, FsyncNo} {
		t.Run(string(pol), func(t *testing.T) {
			d := filepath.Join(dir, string(pol))
			s, err := Open(Options{Dir: d, Fsync: pol, Now: clock})
			if err != nil {
				t.Fatal(err)
			}
			mustSet(t, s, "a", "1", 0)
			mustSet(t, s, "ttl", "x", now+1000)
			mustSet(t, s, "short", "x", now+10)
			s.Append("a", []byte("0"))
			s.IncrBy("a", 1)
			s.MSet([]Item{{Key: "m1", Val: []byte("v1")}, {Key: "m2", Val: []byte("v2"), Exp: now + 5000}})
			s.Del("m1")
			s.FlushAll()
			mustSet(t, s, "after", "flush", 0)
			mustSet(t, s, "ttl", "x", now+1000)
			mustSet(t, s, "short", "x", now+10)
			s.ExpireAt("after", now+3000, ExpireAlways)
			if err := s.Close(); err != nil {
				t.Fatal(err)
			}
			now += 100 // "short" expires while the server is down
			s2 := open(t, Options{Dir: d, Fsync: pol, Now: clock})
			wantVal(t, s2, "after", "flush")
			wantAbsent(t, s2, "a")
			wantAbsent(t, s2, "short")
			if _, exp, _ := s2.Get("ttl"); exp != now-100+1000 {
				t.Fatalf("expiry after restart = %d, want the absolute time %d", exp, now-100+1000)
			}
			if _, exp, _ := s2.Get("after"); exp != now-100+3000 {
				t.Fatalf("PEXPIREAT after restart = %d", exp)
			}
		})
	}
}

// writeAOF writes n records through a store and returns the file's path
// and the offsets where each record ends.
func writeAOF(t *testing.T, n int) (string, []int64) {
	t.Helper()
	dir := t.TempDir()
	s, err := Open(Options{Dir: dir, Fsync: FsyncNo}) // Wait: written, so AOFSize counts it
	if err != nil {
		t.Fatal(err)
	}
	var ends []int64
	for i := range n {
		mustSet(t, s, fmt.Sprint("k", i), fmt.Sprint("value-", i), 0)
		ends = append(ends, s.Info().AOFSize)
	}
	s.Close()
	return filepath.Join(dir, AOFName), ends
}

func TestTornTailIsTruncated(t *testing.T) {
	path, ends := writeAOF(t, 10)
	for _, cut := range []int64{1, 3, 8, 9} { // inside the header, and inside the payload
		t.Run(fmt.Sprint("cut", cut), func(t *testing.T) {
			if err := os.Truncate(path, ends[8]+cut); err != nil {
				t.Fatal(err)
			}
			var logged []string
			s := open(t, Options{Dir: filepath.Dir(path), Logf: func(f string, a ...any) { logged = append(logged, fmt.Sprintf(f, a...)) }})
			wantVal(t, s, "k8", "value-8")
			wantAbsent(t, s, "k9")
			if fi, _ := os.Stat(path); fi.Size() != ends[8] {
				t.Fatalf("file is %d bytes after recovery, want cut to %d", fi.Size(), ends[8])
			}
			if len(logged) == 0 || !contains(logged, "torn tail") {
				t.Fatalf("the cut was not logged: %q", logged)
			}
			mustSet(t, s, "k9", "again", 0) // appends after the cut
			s.Close()
			s2 := open(t, Options{Dir: filepath.Dir(path)})
			wantVal(t, s2, "k9", "again")
			s2.Close()
			os.Truncate(path, ends[8]) // for the next case: drop k9 again
		})
	}
}

// TestZeroFilledTailRefusesUnlessRepair: zeros after the last record
// (a filesystem that extended the file in a crash, or a zeroed page) are
// not an incomplete record, so version 2 refuses and says so.
func TestZeroFilledTailRefusesUnlessRepair(t *testing.T) {
	path, ends := writeAOF(t, 5)
	f, _ := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
	f.Write(make([]byte, 4096))
	f.Close()
	_, err := Open(Options{Dir: filepath.Dir(path)})
	var ce *CorruptError
	if !errors.As(err, &ce) || ce.Offset != ends[4] || ce.Bytes != 4096 || !strings.Contains(err.Error(), "every byte from there on is zero") {
		t.Fatalf("Open = %v, want a CorruptError at %d naming the zeros", err, ends[4])
	}
	s := open(t, Options{Dir: filepath.Dir(path), Repair: true})
	wantVal(t, s, "k4", "value-4")
	if fi, _ := os.Stat(path); fi.Size() != ends[4] {
		t.Fatalf("size %d, want %d", fi.Size(), ends[4])
	}
}

func TestCorruptMiddleRefusesWithOffsetUnlessRepair(t *testing.T) {
	path, ends := writeAOF(t, 10)
	b, _ := os.ReadFile(path)
	b[ends[4]+frameHead+2] ^= 0xff // a payload byte of record 5 (k5)
	os.WriteFile(path, b, 0o644)
	_, err := Open(Options{Dir: filepath.Dir(path)})
	var ce *CorruptError
	if !errors.As(err, &ce) || !errors.Is(err, ErrCorrupt) {
		t.Fatalf("Open = %v, want a CorruptError", err)
	}
	if ce.Offset != ends[4] {
		t.Fatalf("offset %d, want %d", ce.Offset, ends[4])
	}
	if !contains([]string{err.Error()}, fmt.Sprint("offset ", ends[4])) {
		t.Fatalf("error does not name the offset: %v", err)
	}
	if after, _ := os.ReadFile(path); len(after) != len(b) {
		t.Fatal("a refused start must not modify the file")
	}
	s := open(t, Options{Dir: filepath.Dir(path), Repair: true})
	wantVal(t, s, "k4", "value-4")
	wantAbsent(t, s, "k5")
	wantAbsent(t, s, "k9")
}

func TestBadMagic(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, AOFName), []byte("*2\r\n$3\r\nSET\r\n"), 0o644)
	if _, err := Open(Options{Dir: dir}); !errors.Is(err, ErrBadMagic) {
		t.Fatalf("Open = %v, want ErrBadMagic", err)
	}
}

func contains(ss []string, sub string) bool {
	for _, s := range ss {
		if len(sub) == 0 || (len(s) >= len(sub) && indexOf(s, sub) >= 0) {
			return true
		}
	}
	return false
}

func indexOf(s, sub string) int {
	for i := 0; i+len(sub) <= len(s); i++ {
		if s[i:i+len(sub)] == sub {
			return i
		}
	}
	return -1
}

// TestGroupCommit: 50 concurrent writers under always share fsyncs.
func TestGroupCommit(t *testing.T) {
	s := open(t, Options{Dir: t.TempDir(), Fsync: FsyncAlways})
	const writers, each = 50, 20
	var wg sync.WaitGroup
	for w := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range each {
				mustSet(t, s, fmt.Sprint(w, "-", i), "v", 0)
			}
		}()
	}
	wg.Wait()
	in := s.Info()
	if in.Records != writers*each {
		t.Fatalf("%d records, want %d", in.Records, writers*each)
	}
	// Each acknowledged write was fsynced; with 50 waiting at once the
	// batches must be shared. Even a machine that serializes the writers
	// completely yields one fsync per write; demand fewer than that.
	if in.Fsyncs >= in.Records {
		t.Fatalf("%d fsyncs for %d writes: no group commit", in.Fsyncs, in.Records)
	}
	t.Logf("%d writes, %d fsyncs", in.Records, in.Fsyncs)
}

// TestRewriteKeepsStateUnderConcurrentWrites: compaction while writers
// run, then a restart, must give the same state as the memory held.
func TestRewriteKeepsStateUnderConcurrentWrites(t *testing.T) {
	dir := t.TempDir()
	s, err := Open(Options{Dir: dir, Fsync: FsyncEverySec, RewritePercent: -1})
	if err != nil {
		t.Fatal(err)
	}
	for i := range 2000 {
		mustSet(t, s, fmt.Sprint("k", i%500), fmt.Sprint("v", i), 0)
	}
	before := s.Info().AOFSize
	var stop atomic.Bool
	var wg sync.WaitGroup
	for w := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; !stop.Load(); i++ {
				k := fmt.Sprint("w", w, "-", i%100)
				switch i % 4 {
				case 0, 1:
					mustSet(t, s, k, fmt.Sprint(i), 0)
				case 2:
					_, tk, _ := s.Del(k)
					s.Wait(tk)
				case 3:
					_, tk, _ := s.Append(k, []byte("+"))
					s.Wait(tk)
				}
			}
		}()
	}
	for range 3 {
		done, err := s.Rewrite()
		if err != nil {
			t.Fatal(err)
		}
		if err := <-done; err != nil {
			t.Fatalf("rewrite: %v", err)
		}
	}
	stop.Store(true)
	wg.Wait()
	if in := s.Info(); in.Rewrites != 3 {
		t.Fatalf("%d rewrites", in.Rewrites)
	}
	want := snapshot(s)
	s.Close()
	s2 := open(t, Options{Dir: dir})
	got := snapshot(s2)
	if len(got) != len(want) {
		t.Fatalf("%d keys after restart, want %d", len(got), len(want))
	}
	for k, v := range want {
		if got[k] != v {
			t.Fatalf("key %q = %q after restart, want %q", k, got[k], v)
		}
	}
	if after := s2.Info().AOFSize; after >= before*2 {
		t.Logf("AOF %d bytes before, %d after rewrite", before, after)
	}
	if _, err := os.Stat(filepath.Join(dir, AOFName+".rewrite")); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("temporary file left behind: %v", err)
	}
}

func snapshot(s *Store) map[string]string {
	m := map[string]string{}
	s.Keys(func(k string) bool {
		v, _, _ := s.Get(k)
		m[k] = string(v)
		return true
	})
	return m
}

func TestAutoRewriteOnGrowth(t *testing.T) {
	dir := t.TempDir()
	s := open(t, Options{Dir: dir, Fsync: FsyncNo, RewriteMinSize: 4096, RewritePercent: 100})
	for i := range 2000 {
		mustSet(t, s, "same", fmt.Sprint(i), 0)
	}
	// Generous bound for a loaded machine: the rewrite is tiny.
	deadline := time.Now().Add(5 * time.Second)
	for s.Info().Rewrites == 0 && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	in := s.Info()
	if in.Rewrites == 0 {
		t.Fatal("no automatic rewrite")
	}
	if in.AOFSize > 64<<10 {
		t.Fatalf("AOF still %d bytes", in.AOFSize)
	}
}

func TestGetBytesMatchesGet(t *testing.T) {
	s := open(t, Options{})
	for i := range 300 {
		mustSet(t, s, fmt.Sprint("key-", i), fmt.Sprint(i), 0)
	}
	for i := range 300 {
		k := fmt.Sprint("key-", i)
		v, _, ok := s.GetBytes([]byte(k))
		if !ok || string(v) != fmt.Sprint(i) {
			t.Fatalf("GetBytes(%q) = %q, %v", k, v, ok)
		}
	}
	if _, _, ok := s.GetBytes([]byte("absent")); ok {
		t.Fatal("absent key found")
	}
	if n := testing.AllocsPerRun(100, func() { s.GetBytes([]byte("key-7")) }); n != 0 {
		t.Fatalf("GetBytes allocates %v times", n)
	}
}

// TestWritersShareWrites: under everysec, writers waiting at once on one
// CPU must share write() calls, as redis-server writes the AOF once per
// event-loop turn. Before the leader yielded ahead of taking its batch,
// each writer on GOMAXPROCS 1 wrote alone (batches == records); with the
// yield a batch holds every writer the scheduler had ready (about 50
// here). Half as many batches as writes is a bound far from both.
func TestWritersShareWrites(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1))
	s := open(t, Options{Dir: t.TempDir(), Fsync: FsyncEverySec})
	const writers, each = 50, 100
	var wg sync.WaitGroup
	for w := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range each {
				mustSet(t, s, fmt.Sprint(w, "-", i), "v", 0)
			}
		}()
	}
	wg.Wait()
	in := s.Info()
	if in.Records != writers*each {
		t.Fatalf("%d records, want %d", in.Records, writers*each)
	}
	if in.Batches*2 > in.Records {
		t.Fatalf("%d write batches for %d writes: writers do not share write()", in.Batches, in.Records)
	}
	t.Logf("%d writes in %d batches", in.Records, in.Batches)
}

// TestActiveExpirySkipsShardsWithoutTTL: active expiry passes over the
// shards a full scan found without any expiry, and every way a key gets
// one — SET with an expiry, PEXPIRE, MSET, replaying the AOF — makes its
// shard scanned again, so the key is removed without being read.
func TestActiveExpirySkipsShardsWithoutTTL(t *testing.T) {
	now := int64(1_000_000)
	dir := t.TempDir()
	s, err := Open(Options{Dir: dir, Fsync: FsyncNo, Now: func() int64 { return now }})
	if err != nil {
		t.Fatal(err)
	}
	tick := func() {
		for i := range s.shards {
			s.expireShard(&s.shards[i], now, 64)
		}
	}
	for i := range 2000 {
		s.Set(fmt.Sprintf("plain:%d", i), []byte("v"), SetOpts{})
	}
	tick()
	for i := range s.shards {
		if s.shards[i].ttl.Load() {
			t.Fatalf("shard %d still scanned after a scan found no expiry", i)
		}
	}
	ways := map[string]func(key string){
		"SET PX":  func(k string) { s.Set(k, []byte("v"), SetOpts{Exp: now + 5}) },
		"PEXPIRE": func(k string) { s.Set(k, []byte("v"), SetOpts{}); tick(); s.ExpireAt(k, now+5, 0) },
		"MSET":    func(k string) { s.MSet([]Item{{Key: k, Val: []byte("v"), Exp: now + 5}}) },
	}
	for name, set := range ways {
		key := "ttl:" + name
		set(key)
		now += 10
		tick()
		if s.Len() != 2000 || s.Exists(key) {
			t.Errorf("%s: the key with an expiry was not removed by active expiry (%d keys)", name, s.Len())
		}
		sh := &s.shards[shardOf(key)]
		sh.mu.RLock()
		_, there := sh.m[key]
		sh.mu.RUnlock()
		if there {
			t.Errorf("%s: the expired key is still in its shard", name)
		}
	}
	s.Set("replayed", []byte("v"), SetOpts{Exp: now + 1000})
	s.Close()
	if s, err = Open(Options{Dir: dir, Fsync: FsyncNo, Now: func() int64 { return now }}); err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	tick() // clears the shards without one
	now += 2000
	tick()
	sh := &s.shards[shardOf("replayed")]
	sh.mu.RLock()
	_, there := sh.m["replayed"]
	sh.mu.RUnlock()
	if there {
		t.Error("a key replayed with an expiry was not removed by active expiry")
	}
}

// TestActiveExpiryTakesNoLockOfAShardWithoutTTL: the scan passes over a
// shard with nothing to expire without taking its lock, so a writer
// holding it (the event loop, preempted mid-SET) never has the scan
// waiting on it, nor the mutex hand the CPU to the scan at its unlock.
func TestActiveExpiryTakesNoLockOfAShardWithoutTTL(t *testing.T) {
	s := open(t, Options{})
	s.Set("plain", []byte("v"), SetOpts{})
	sh := &s.shards[shardOf("plain")]
	s.expireShard(sh, s.Now(), 64) // finds no expiry: the shard is passed over from now on
	sh.mu.Lock()
	done := make(chan struct{})
	go func() {
		s.expireShard(sh, s.Now(), 64)
		close(done)
	}()
	select {
	case <-done:
	case <-time.After(20 * time.Second):
		sh.mu.Unlock()
		<-done
		t.Fatal("active expiry waited for the lock of a shard without any expiry")
	}
	sh.mu.Unlock()
	// One with an expiry is scanned (under its lock) again.
	s.Set("ttl", []byte("v"), SetOpts{Exp: s.Now() + 1000})
	sh = &s.shards[shardOf("ttl")]
	if !sh.ttl.Load() {
		t.Fatal("a shard holding a key with an expiry is not scanned")
	}
}
