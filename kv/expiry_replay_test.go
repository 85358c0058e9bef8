package kv

import (
	"sync/atomic"
	"testing"
)

// TestReplayKeepsKeysWhoseExpiryMoved: a key SET with an expiry whose time
// a later PERSIST or PEXPIREAT moved must survive a restart after the
// first time. Replay dropped the SET as expired before it reached the
// op that moved the time: the key was lost silently, and an APPEND to it
// made the start refuse (seen in kv/repl's TestChaos).
func TestReplayKeepsKeysWhoseExpiryMoved(t *testing.T) {
	var clock atomic.Int64
	clock.Store(1_000_000)
	now := func() int64 { return clock.Load() }
	dir := t.TempDir()
	s, err := Open(Options{Dir: dir, Fsync: FsyncAlways, Now: now})
	if err != nil {
		t.Fatal(err)
	}
	set := func(k, v string, exp int64) {
		_, tk, err := s.Set(k, []byte(v), SetOpts{Exp: exp})
		if err == nil {
			err = s.Wait(tk)
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	wait := func(tk Ticket, err error) {
		t.Helper()
		if err == nil {
			err = s.Wait(tk)
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	set("persisted", "v", 1_000_100)
	_, tk, err := s.Persist("persisted")
	wait(tk, err)
	set("appended", "v", 1_000_100)
	_, tk, err = s.Persist("appended")
	wait(tk, err)
	_, tk, err = s.Append("appended", []byte("x"))
	wait(tk, err)
	set("extended", "v", 1_000_100)
	_, tk, err = s.ExpireAt("extended", 1_000_500, 0)
	wait(tk, err)
	set("expired", "v", 1_000_100)
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}

	clock.Store(1_000_200) // past the first expiry, before the extended one
	s2, err := Open(Options{Dir: dir, Now: now})
	if err != nil {
		t.Fatalf("restart: %v", err)
	}
	defer s2.Close()
	for k, want := range map[string]string{"persisted": "v", "appended": "vx", "extended": "v"} {
		wantVal(t, s2, k, want)
	}
	if _, exp, _ := s2.Get("extended"); exp != 1_000_500 {
		t.Errorf("extended: expiry %d, want 1000500", exp)
	}
	if _, exp, _ := s2.Get("persisted"); exp != 0 {
		t.Errorf("persisted: expiry %d, want none", exp)
	}
	wantAbsent(t, s2, "expired")
	if n := s2.Len(); n != 3 {
		t.Errorf("%d keys after restart, want 3 (the expired one dropped)", n)
	}
}
