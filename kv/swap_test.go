package kv

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"testing"
)

// fill applies n keys "old:i" and a position, as a replica's stream does.
func fill(t *testing.T, s *Store, n int, meta string) {
	t.Helper()
	for i := range n {
		tk, err := s.Apply(AppendSetOp(nil, fmt.Sprintf("old:%d", i), []byte("o"), 0), []byte(meta))
		if err == nil {
			err = s.Wait(tk)
		}
		if err != nil {
			t.Fatal(err)
		}
	}
}

func snapshotPayloads(n, per int) [][]byte {
	var out [][]byte
	var p []byte
	for i := range n {
		p = AppendSetOp(p, fmt.Sprintf("new:%d", i), []byte(fmt.Sprint("v", i)), 0)
		if (i+1)%per == 0 || i == n-1 {
			out = append(out, p)
			p = nil
		}
	}
	return out
}

// TestReplacementAbortChangesNothing: a replacement loaded part-way and
// aborted (a cut snapshot) leaves the data, the position and the AOF's
// bytes as they were, and no file beside it.
func TestReplacementAbortChangesNothing(t *testing.T) {
	dir := t.TempDir()
	s, err := Open(Options{Dir: dir, Replica: true, RewritePercent: -1})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	fill(t, s, 300, "pos 1")
	before, err := os.ReadFile(filepath.Join(dir, AOFName))
	if err != nil {
		t.Fatal(err)
	}
	r, err := s.NewReplacement()
	if err != nil {
		t.Fatal(err)
	}
	loads := 0
	for _, p := range snapshotPayloads(5000, 100)[:20] {
		if err := r.Load(p); err != nil {
			t.Fatal(err)
		}
		loads++
		if s.Len() != 300 {
			t.Fatalf("after %d loads the store has %d keys, want its 300", loads, s.Len())
		}
	}
	if loads != 20 || r.Len() != 2000 || r.Ops() != 2000 {
		t.Fatalf("loaded %d payloads, %d keys, %d ops", loads, r.Len(), r.Ops())
	}
	if _, err := os.Stat(filepath.Join(dir, SwapName)); err != nil {
		t.Fatalf("the replacement is not written aside: %v", err)
	}
	r.Abort()
	after, _ := os.ReadFile(filepath.Join(dir, AOFName))
	if string(after) != string(before) || s.Len() != 300 || string(s.Meta()) != "pos 1" {
		t.Fatalf("abort changed the store: AOF %d -> %d bytes, %d keys, meta %q", len(before), len(after), s.Len(), s.Meta())
	}
	if _, err := os.Stat(filepath.Join(dir, SwapName)); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("abort left %s: %v", SwapName, err)
	}
	if err := r.Load(snapshotPayloads(1, 1)[0]); err == nil {
		t.Fatal("Load after Abort was accepted")
	}
	if err := s.Swap(r, []byte("pos 2")); err == nil {
		t.Fatal("Swap after Abort was accepted")
	}
}

// TestReplacementRefusesNonSet: a snapshot carries SETs only; a payload
// with anything else (or garbage) is refused and adds nothing.
func TestReplacementRefusesNonSet(t *testing.T) {
	s, err := Open(Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	r, _ := s.NewReplacement()
	defer r.Abort()
	bad := [][]byte{
		append(AppendSetOp(nil, "a", []byte("1"), 0), opFlushAll),
		appendDelOp(AppendSetOp(nil, "a", []byte("1"), 0), "b"),
		AppendMetaOp(nil, []byte("x")),
		{0xff},
		nil,
	}
	for i, p := range bad {
		if err := r.Load(p); !errors.Is(err, ErrReplacement) {
			t.Errorf("payload %d: %v, want ErrReplacement", i, err)
		}
	}
	if r.Len() != 0 || r.Ops() != 0 {
		t.Fatalf("refused payloads added %d keys", r.Len())
	}
}

// TestSwapIsDurable: after a swap the store serves exactly the
// replacement at its position, later writes append to the new file, and
// a reopen (a crash after the swap) finds the same.
func TestSwapIsDurable(t *testing.T) {
	for _, dir := range []string{"", t.TempDir()} {
		name := "memory"
		if dir != "" {
			name = "aof"
		}
		t.Run(name, func(t *testing.T) {
			o := Options{Dir: dir, Replica: true, RewritePercent: -1}
			s, err := Open(o)
			if err != nil {
				t.Fatal(err)
			}
			fill(t, s, 300, "pos 1")
			// A logged record nobody waited for yet: superseded by the
			// swap, its waiter must not hang or fail.
			tk, err := s.Apply(AppendSetOp(nil, "pending", []byte("p"), 0), []byte("pos 1b"))
			if err != nil {
				t.Fatal(err)
			}
			r, err := s.NewReplacement()
			if err != nil {
				t.Fatal(err)
			}
			for _, p := range snapshotPayloads(1000, 64) {
				if err := r.Load(p); err != nil {
					t.Fatal(err)
				}
			}
			if err := s.Swap(r, []byte("pos 2")); err != nil {
				t.Fatal(err)
			}
			if err := s.Wait(tk); err != nil {
				t.Fatalf("waiting for a superseded record: %v", err)
			}
			tk, err = s.Apply(AppendSetOp(nil, "after", []byte("a"), 0), []byte("pos 3"))
			if err == nil {
				err = s.Wait(tk)
			}
			if err != nil {
				t.Fatal(err)
			}
			check := func(when string, s *Store) {
				t.Helper()
				if s.Len() != 1001 || string(s.Meta()) != "pos 3" {
					t.Fatalf("%s: %d keys, meta %q; want 1001, pos 3", when, s.Len(), s.Meta())
				}
				if _, _, ok := s.Get("old:1"); ok {
					t.Fatalf("%s: an old key survived the swap", when)
				}
				if _, _, ok := s.Get("pending"); ok {
					t.Fatalf("%s: a superseded record survived the swap", when)
				}
				if v, _, _ := s.Get("new:999"); string(v) != "v999" {
					t.Fatalf("%s: new:999 = %q", when, v)
				}
			}
			check("live", s)
			s.Close()
			if dir == "" {
				return
			}
			if _, err := os.Stat(filepath.Join(dir, SwapName)); !errors.Is(err, os.ErrNotExist) {
				t.Fatalf("swap left %s: %v", SwapName, err)
			}
			s, err = Open(o)
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			check("reopened", s)
		})
	}
}

// TestSwapAbandonsRewrite: a rewrite running across a swap must not
// rename its copy of the old content over the swapped-in file.
func TestSwapAbandonsRewrite(t *testing.T) {
	dir := t.TempDir()
	o := Options{Dir: dir, Replica: true, RewritePercent: -1}
	s, err := Open(o)
	if err != nil {
		t.Fatal(err)
	}
	fill(t, s, 2000, "pos 1")
	r, _ := s.NewReplacement()
	for _, p := range snapshotPayloads(10, 5) {
		r.Load(p)
	}
	done, err := s.Rewrite()
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Swap(r, []byte("pos 2")); err != nil {
		t.Fatal(err)
	}
	<-done // abandoned or finished before the swap: either way the swap wins
	s.Close()
	if s, err = Open(o); err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if s.Len() != 10 || string(s.Meta()) != "pos 2" {
		t.Fatalf("after a swap during a rewrite: %d keys, meta %q", s.Len(), s.Meta())
	}
}

// TestCrashMidReplacement: a follower killed while it loads a snapshot
// aside (the replacement neither swapped nor aborted) restarts on its old
// AOF, whole; the swap file left behind is not read, and the next
// replacement overwrites it.
func TestCrashMidReplacement(t *testing.T) {
	dir := t.TempDir()
	o := Options{Dir: dir, Replica: true, RewritePercent: -1}
	s, err := Open(o)
	if err != nil {
		t.Fatal(err)
	}
	fill(t, s, 300, "pos 1")
	r, err := s.NewReplacement()
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range snapshotPayloads(5000, 100) {
		if err := r.Load(p); err != nil {
			t.Fatal(err)
		}
	}
	r.flush() // what a crash leaves: part of the file written, no swap
	s.Close() // the "crash": the replacement is never finished
	if fi, err := os.Stat(filepath.Join(dir, SwapName)); err != nil || fi.Size() == 0 {
		t.Fatalf("the test needs a swap file left behind: %v", err)
	}
	if s, err = Open(o); err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if s.Len() != 300 || string(s.Meta()) != "pos 1" {
		t.Fatalf("restarted with %d keys, meta %q; want the old 300 at pos 1", s.Len(), s.Meta())
	}
	r, err = s.NewReplacement()
	if err != nil {
		t.Fatal(err)
	}
	r.Load(snapshotPayloads(7, 7)[0])
	if err := s.Swap(r, []byte("pos 2")); err != nil {
		t.Fatal(err)
	}
	s.Close()
	if s, err = Open(o); err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if s.Len() != 7 || string(s.Meta()) != "pos 2" {
		t.Fatalf("after the next swap and a restart: %d keys, meta %q", s.Len(), s.Meta())
	}
}
