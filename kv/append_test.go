package kv

import (
	"bytes"
	"strings"
	"testing"
)

// TestAppendLogsTheCommand: 50 one-byte APPENDs to a 10 MiB value grow
// the AOF by the appended bytes plus framing (it logged the whole value
// each time: ~500 MiB), and replay gives the same value.
func TestAppendLogsTheCommand(t *testing.T) {
	dir := t.TempDir()
	s := open(t, Options{Dir: dir, Fsync: FsyncNo, RewritePercent: -1})
	big := bytes.Repeat([]byte("0123456789abcdef"), 10<<20/16)
	mustSet(t, s, "big", string(big), 0)
	before := s.Info().AOFSize
	const n = 50
	for i := range n {
		_, tk, err := s.Append("big", []byte{byte('a' + i%26)})
		if err == nil {
			err = s.Wait(tk)
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	grew := s.Info().AOFSize - before
	// Per record: the 16-byte header, op, expiry, key length, "big",
	// total (4 varint bytes), value length and the byte: 28 bytes.
	if per := grew / n; per > 36 {
		t.Fatalf("50 one-byte APPENDs grew the AOF by %d bytes (%d each), want about 28 each", grew, per)
	}
	t.Logf("50 one-byte APPENDs to a %d-byte value: AOF grew %d bytes", len(big), grew)
	want, _, _ := s.Get("big")
	want = bytes.Clone(want)
	s.Close()
	s2 := open(t, Options{Dir: dir})
	got, _, _ := s2.Get("big")
	if !bytes.Equal(got, want) || len(got) != len(big)+n {
		t.Fatalf("replayed value of %d bytes differs from the %d written", len(got), len(want))
	}
}

// TestAppendReplayChecksLength: an APPEND whose key does not hold the
// logged length (a record out of order) refuses, never a wrong value.
func TestAppendReplayChecksLength(t *testing.T) {
	s := open(t, Options{})
	if err := s.replay([]Op{{Code: opAppend, Key: []byte("k"), Val: []byte("x"), Total: 5}}); err == nil || !strings.Contains(err.Error(), "does not make the logged 5") {
		t.Fatalf("replay = %v, want a length mismatch", err)
	}
	if _, err := s.Apply(appendAppendOp(nil, "k", []byte("x"), 1, 0), nil); err == nil {
		t.Fatal("Apply took an APPEND op: a replicated record must set state outright")
	}
}

// TestTapSeesAppendAsSet: followers get APPEND's result (a SET), which
// converges if applied twice.
func TestTapSeesAppendAsSet(t *testing.T) {
	tp := &recTap{}
	s := open(t, Options{Tap: tp})
	s.Append("k", []byte("ab"))
	s.Append("k", []byte("cd"))
	tp.mu.Lock()
	defer tp.mu.Unlock()
	if len(tp.recs) != 2 {
		t.Fatalf("tap got %d records, want 2", len(tp.recs))
	}
	if last := tp.recs[1][0]; last.Code != opSet || string(last.Val) != "abcd" {
		t.Fatalf("tap got op 0x%02x %q, want SET \"abcd\"", last.Code, last.Val)
	}
}

// TestRewriteTailAppendConverges: an APPEND logged after a rewrite began
// but before its snapshot copied the key is in the snapshot and in the
// rewrite's tail; the tail must hold its result (a SET), or replay would
// append twice. Deterministic: the rewrite is driven by hand around it.
func TestRewriteTailAppendConverges(t *testing.T) {
	dir := t.TempDir()
	s := open(t, Options{Dir: dir, Fsync: FsyncNo, RewritePercent: -1})
	mustSet(t, s, "k", "base", 0)
	a := s.aof
	rw := &rewrite{done: make(chan error, 1)}
	a.mu.Lock()
	a.rw = rw
	a.mu.Unlock()
	_, tk, err := s.Append("k", []byte("+tail")) // in the tail and, below, the snapshot
	if err == nil {
		err = s.Wait(tk)
	}
	if err != nil {
		t.Fatal(err)
	}
	err = a.runRewrite(rw)
	a.mu.Lock()
	rw.finished, a.rw = true, nil
	a.cond.Broadcast()
	a.mu.Unlock()
	if err != nil {
		t.Fatal(err)
	}
	s.Close()
	s2 := open(t, Options{Dir: dir})
	wantVal(t, s2, "k", "base+tail")
}
