package repl

import (
	"bytes"
	"encoding/binary"
	"net/http"
	"net/http/httptest"
	"runtime"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/wirebench/wirebench/internal/testkit"
	"github.com/wirebench/wirebench/kv"
)

// doubling is the wait sequence with the longest jitter: 50 ms doubling
// to the 1 s cap.
func doubling(n int) []time.Duration {
	var out []time.Duration
	d := 50 * time.Millisecond
	for range n {
		out = append(out, d)
		d = min(2*d, time.Second)
	}
	return out
}

// gapLeader serves a good (empty) snapshot and a stream whose first
// record skips a number: issue 34's resync storm. before runs in the
// stream handler once the stream's head is sent, before the bad record.
func gapLeader(before func()) *fakeLeader {
	pos := Position{ID: newID()}
	return &fakeLeader{
		snapshot: func(w http.ResponseWriter, r *http.Request, n int) {
			serveBody(w, appendFrame(nil, KindEnd, 1, 0, snapshotEnd{Pos: pos}.encode()), false)
		},
		stream: func(w http.ResponseWriter, r *http.Request, n int) {
			streamFrom(w, r, before, appendFrame(nil, KindRecord, pos.Seq+2, 0, kv.AppendSetOp(nil, "k", []byte("v"), 0)))
		},
	}
}

// TestGapBackoff: a leader whose stream has a sequence gap made the
// follower resync ~4,900 times in 11 s (no wait after a resync request).
// In 11 s of virtual time it now resyncs at most 16 times, each wait
// doubling from 50 ms to the 1 s cap.
func TestGapBackoff(t *testing.T) {
	fl := gapLeader(nil)
	srv := httptest.NewServer(fl)
	defer srv.Close()
	st, err := kv.Open(kv.Options{Replica: true})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	// Stop at 11 s of virtual time, or after 1000 sleeps (no backoff).
	clk := newFakeClock(func(n int, el time.Duration) bool { return el >= 11*time.Second || n >= 1000 })
	f, err := StartFollower(st, FollowerOptions{Leader: srv.URL, Now: clk.Now, Sleep: clk.Sleep, jitter: maxJitter})
	if err != nil {
		t.Fatal(err)
	}
	clk.wait(t)
	f.Close()
	snaps, streams := fl.counts()
	waits := clk.Waits()
	t.Logf("11 s with a sequence gap: %d resyncs, %d streams, waits %v", snaps, streams, waits)
	if !slices.Equal(waits, doubling(len(waits))) {
		t.Fatalf("waits %v: want 50 ms doubling to 1 s", waits)
	}
	if snaps > 16 || snaps < 10 || f.Status().SeqErrors < 10 {
		t.Fatalf("%d resyncs in 11 s (want 10..16), %d sequence errors", snaps, f.Status().SeqErrors)
	}
}

// TestBackoffResetsAfterStableStream: a stream that stayed up for
// StableAfter ends a new incident: the next wait is the shortest again.
func TestBackoffResetsAfterStableStream(t *testing.T) {
	var clk *fakeClock
	var fp atomic.Pointer[Follower]
	fl := gapLeader(func() { // the stream is up 6 s before the bad record
		linked := func() bool { f := fp.Load(); return f != nil && f.Status().Link }
		for deadline := time.Now().Add(30 * time.Second); !linked() && time.Now().Before(deadline); {
			time.Sleep(time.Millisecond)
		}
		clk.advance(6 * time.Second)
	})
	srv := httptest.NewServer(fl)
	defer srv.Close()
	st, _ := kv.Open(kv.Options{Replica: true})
	defer st.Close()
	clk = newFakeClock(func(n int, _ time.Duration) bool { return n >= 6 })
	f, err := StartFollower(st, FollowerOptions{Leader: srv.URL, Now: clk.Now, Sleep: clk.Sleep, jitter: maxJitter})
	if err != nil {
		t.Fatal(err)
	}
	fp.Store(f)
	clk.wait(t)
	f.Close()
	for i, w := range clk.Waits() {
		if w != 50*time.Millisecond {
			t.Fatalf("wait %d after a stream up 6 s: %v, want the reset 50ms (%v)", i, w, clk.Waits())
		}
	}
}

// TestBackoffEveryFailure: whatever fails, the follower waits, longer
// each time; and every log line carries "repl: " once (issue 42's
// doubled prefix).
func TestBackoffEveryFailure(t *testing.T) {
	good := Position{ID: newID()}
	okSnap := func(w http.ResponseWriter, r *http.Request, n int) {
		serveBody(w, appendFrame(nil, KindEnd, 1, 0, snapshotEnd{Pos: good}.encode()), false)
	}
	deadURL := "http://" + testkit.RefusedAddr(t) // connections refused
	cases := []struct {
		name   string
		leader *fakeLeader // nil: nobody listens
		want   string      // in the last error
	}{
		{"connection refused", nil, "connection refused"},
		{"stream 500", &fakeLeader{snapshot: okSnap, stream: func(w http.ResponseWriter, r *http.Request, n int) {
			http.Error(w, "boom", http.StatusInternalServerError)
		}}, "500"},
		{"409 then snapshot 503", &fakeLeader{stream: conflict, snapshot: func(w http.ResponseWriter, r *http.Request, n int) {
			http.Error(w, "busy", http.StatusServiceUnavailable)
		}}, "503"},
		{"409 then a cut snapshot", &fakeLeader{stream: conflict, snapshot: func(w http.ResponseWriter, r *http.Request, n int) {
			serveBody(w, appendFrame(nil, KindSnapshot, 1, 0, kv.AppendSetOp(nil, "k", []byte("v"), 0)), true)
		}}, "snapshot cut"},
		{"bad frame", &fakeLeader{snapshot: okSnap, stream: func(w http.ResponseWriter, r *http.Request, n int) {
			fr := appendFrame(nil, KindRecord, 1, 0, kv.AppendSetOp(nil, "k", []byte("v"), 0))
			fr[len(fr)-1] ^= 1 // the CRC fails
			w.WriteHeader(http.StatusOK)
			w.Write(fr)
		}}, "bad replication frame"},
		{"redirect", &fakeLeader{snapshot: okSnap, stream: func(w http.ResponseWriter, r *http.Request, n int) {
			http.Redirect(w, r, "http://127.0.0.1:1/elsewhere", http.StatusFound)
		}}, "redirects are not followed"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			url := deadURL
			if c.leader != nil {
				srv := httptest.NewServer(c.leader)
				defer srv.Close()
				url = srv.URL
			}
			st, _ := kv.Open(kv.Options{Replica: true})
			defer st.Close()
			st.Apply(nil, good.encode()) // start by streaming
			var logs logLines
			clk := newFakeClock(func(n int, _ time.Duration) bool { return n >= 8 })
			f, err := StartFollower(st, FollowerOptions{Leader: url, Now: clk.Now, Sleep: clk.Sleep, jitter: maxJitter, Logf: logs.logf})
			if err != nil {
				t.Fatal(err)
			}
			clk.wait(t)
			f.Close()
			if w := clk.Waits(); !slices.Equal(w, doubling(8)) {
				t.Fatalf("waits %v, want %v", w, doubling(8))
			}
			s := f.Status()
			if !strings.Contains(s.LastError, c.want) || s.Reconnects != 8 {
				t.Fatalf("last error %q (want %q), %d reconnects", s.LastError, c.want, s.Reconnects)
			}
			lines := logs.all()
			if len(lines) < 8 {
				t.Fatalf("%d log lines", len(lines))
			}
			for _, l := range lines {
				if !strings.HasPrefix(l, "repl: ") || strings.Contains(l, "repl: repl:") {
					t.Fatalf("log line %q: want one \"repl: \" prefix", l)
				}
			}
		})
	}
}

// TestHostileHeaderAllocation: a frame header declaring the largest
// length (576 MiB) followed by a few bytes used to allocate the whole
// length before reading; now the buffer grows with what arrives.
func TestHostileHeaderAllocation(t *testing.T) {
	head := make([]byte, frameHead)
	binary.LittleEndian.PutUint32(head, MaxFrame)
	body := append(head, bytes.Repeat([]byte{'x'}, 4096)...)
	alloc := func(fn func()) uint64 {
		var a, b runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&a)
		fn()
		runtime.ReadMemStats(&b)
		return b.TotalAlloc - a.TotalAlloc
	}
	n := alloc(func() {
		if _, err := newFrameReader(bytes.NewReader(body), MaxFrame).next(); err == nil {
			t.Error("a cut frame was accepted")
		}
	})
	// One growStep ahead of the 4 KiB that arrived, the 64 KiB bufio
	// buffer, and slack for the race detector's accounting: far below
	// the 576 MiB the header asks for.
	const limit = 4 * growStep
	t.Logf("frame reader, hostile header: %d KiB allocated", n>>10)
	if n > limit {
		t.Fatalf("a %d-byte header allocated %d bytes (limit %d)", len(body), n, limit)
	}
	// The follower, on the stream and on the snapshot, 10 attempts each.
	hostile := func(w http.ResponseWriter, r *http.Request, _ int) { serveBody(w, body, false) }
	for _, withPos := range []bool{true, false} {
		fl := &fakeLeader{snapshot: hostile, stream: hostile}
		srv := httptest.NewServer(fl)
		st, _ := kv.Open(kv.Options{Replica: true})
		var meta []byte
		if withPos {
			meta = Position{ID: newID()}.encode()
		}
		// Data the hostile snapshot used to flush before failing.
		st.Apply(kv.AppendSetOp(kv.AppendSetOp(nil, "a", []byte("1"), 0), "b", []byte("2"), 0), meta)
		n := alloc(func() {
			clk := newFakeClock(func(n int, _ time.Duration) bool { return n >= 10 })
			f, err := StartFollower(st, FollowerOptions{Leader: srv.URL, Now: clk.Now, Sleep: clk.Sleep})
			if err != nil {
				t.Fatal(err)
			}
			clk.wait(t)
			f.Close()
		})
		srv.Close()
		keys := st.Len()
		st.Close()
		if keys != 2 {
			t.Fatalf("after hostile headers the follower holds %d keys, want its 2", keys)
		}
		snaps, streams := fl.counts()
		t.Logf("follower, %d snapshots and %d streams with a hostile header: %d MiB allocated", snaps, streams, n>>20)
		if snaps+streams < 10 || n > 64<<20 {
			t.Fatalf("%d attempts allocated %d MiB (limit 64)", snaps+streams, n>>20)
		}
	}
}
