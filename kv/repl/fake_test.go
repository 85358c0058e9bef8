package repl

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/wirebench/wirebench/kv"
)

// Test doubles for the follower: a virtual clock that is also its
// sleeper (no wall-clock waits), a leader's real snapshot body, and a
// fake leader whose answers each test scripts.

var errStop = errors.New("test: stop the follower")

// fakeClock is FollowerOptions.Now and .Sleep: Sleep advances the clock
// by d at once and records d; stop decides after which sleep the
// follower's loop ends (Sleep returns errStop).
type fakeClock struct {
	mu      sync.Mutex
	t       time.Time
	waits   []time.Duration
	stop    func(n int, elapsed time.Duration) bool
	onSleep func() // runs in the follower's goroutine between attempts
	stopped chan struct{}
	once    sync.Once
}

func newFakeClock(stop func(n int, elapsed time.Duration) bool) *fakeClock {
	return &fakeClock{t: time.Unix(1_800_000_000, 0), stop: stop, stopped: make(chan struct{})}
}

var clockStart = time.Unix(1_800_000_000, 0)

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *fakeClock) advance(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

func (c *fakeClock) Sleep(ctx context.Context, d time.Duration) error {
	if c.onSleep != nil {
		c.onSleep()
	}
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.waits = append(c.waits, d)
	n, el := len(c.waits), c.t.Sub(clockStart)
	c.mu.Unlock()
	if c.stop(n, el) {
		c.once.Do(func() { close(c.stopped) })
		return errStop
	}
	return ctx.Err()
}

func (c *fakeClock) Waits() []time.Duration {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]time.Duration(nil), c.waits...)
}

// wait blocks until the follower's loop stopped (generous: a busy box).
func (c *fakeClock) wait(t *testing.T) {
	t.Helper()
	select {
	case <-c.stopped:
	case <-time.After(60 * time.Second):
		t.Fatalf("the follower did not reach its last sleep in 60 s (%d sleeps)", len(c.Waits()))
	}
}

// leaderStore is a leader's store of n keys and its snapshot body, as the
// real handler writes it, with frames of about chunk bytes.
func leaderStore(t *testing.T, n, chunk int) (*kv.Store, *Leader, []byte) {
	t.Helper()
	l := NewLeader(0)
	st, err := kv.Open(kv.Options{Tap: l})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	for i := range n {
		if _, _, err := st.Set(fmt.Sprintf("lead:%05d", i), []byte(strings.Repeat("v", 60)+fmt.Sprint(i)), kv.SetOpts{}); err != nil {
			t.Fatal(err)
		}
	}
	old := snapshotChunk
	snapshotChunk = chunk
	defer func() { snapshotChunk = old }()
	w := httptest.NewRecorder()
	l.Handler(st).ServeHTTP(w, httptest.NewRequest(http.MethodGet, pathSnapshot, nil))
	if w.Code != http.StatusOK {
		t.Fatalf("snapshot: %d %s", w.Code, w.Body)
	}
	return st, l, w.Body.Bytes()
}

// frameEnds lists the offsets where the body's frames end.
func frameEnds(b []byte) []int {
	var ends []int
	for off := 0; off+frameHead <= len(b); {
		off += frameHead + int(binary.LittleEndian.Uint32(b[off:]))
		ends = append(ends, off)
	}
	return ends
}

// fakeLeader serves scripted answers; it records every request.
type fakeLeader struct {
	mu       sync.Mutex
	snapshot func(w http.ResponseWriter, r *http.Request, n int) // n: 0, 1, ... per request
	stream   func(w http.ResponseWriter, r *http.Request, n int)
	nSnap    int
	nStream  int
	auth     []string
}

func (fl *fakeLeader) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	fl.mu.Lock()
	fl.auth = append(fl.auth, r.Header.Get("Authorization"))
	var h func(http.ResponseWriter, *http.Request, int)
	var n int
	switch r.URL.Path {
	case pathSnapshot:
		h, n = fl.snapshot, fl.nSnap
		fl.nSnap++
	case pathStream:
		h, n = fl.stream, fl.nStream
		fl.nStream++
	case pathAck:
		fl.mu.Unlock()
		w.WriteHeader(http.StatusNoContent)
		return
	}
	fl.mu.Unlock()
	if h == nil {
		http.Error(w, "not scripted", http.StatusNotFound)
		return
	}
	h(w, r, n)
}

func (fl *fakeLeader) counts() (snapshots, streams int) {
	fl.mu.Lock()
	defer fl.mu.Unlock()
	return fl.nSnap, fl.nStream
}

// serveBody writes b and ends the response: cleanly (the body ends at a
// chunk boundary) or, with abort, by dropping the connection.
func serveBody(w http.ResponseWriter, b []byte, abort bool) {
	w.Header().Set("Content-Type", ContentType)
	w.WriteHeader(http.StatusOK)
	w.Write(b)
	w.(http.Flusher).Flush()
	if abort {
		panic(http.ErrAbortHandler)
	}
}

// streamFrom answers a stream: its head, then (once the head is sent)
// before, a heartbeat and the frames; then it holds the stream open
// until the follower leaves.
func streamFrom(w http.ResponseWriter, r *http.Request, before func(), frames ...[]byte) {
	w.Header().Set("Content-Type", ContentType)
	w.WriteHeader(http.StatusOK)
	w.(http.Flusher).Flush()
	if before != nil {
		before()
	}
	w.Write(appendFrame(nil, KindHeartbeat, 0, 0, binary.AppendUvarint(nil, 0)))
	for _, f := range frames {
		w.Write(f)
	}
	w.(http.Flusher).Flush()
	<-r.Context().Done()
}

func conflict(w http.ResponseWriter, _ *http.Request, _ int) {
	http.Error(w, `{"error":"resync"}`, http.StatusConflict)
}

// logLines collects Logf's lines.
type logLines struct {
	mu    sync.Mutex
	lines []string
}

func (l *logLines) logf(format string, args ...any) {
	l.mu.Lock()
	l.lines = append(l.lines, fmt.Sprintf(format, args...))
	l.mu.Unlock()
}

func (l *logLines) all() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]string(nil), l.lines...)
}

// maxJitter makes every wait the longest of its range (deterministic).
func maxJitter(n time.Duration) time.Duration { return n }
