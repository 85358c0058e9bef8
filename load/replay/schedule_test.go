package replay

import (
	"bytes"
	"io"
	"math"
	"net/url"
	"runtime"
	"sync/atomic"
	"testing"
	"time"

	"github.com/wirebench/wirebench/load/replay/reqlog"
)

// logOf writes requests at the given offsets (ms) as our request log.
func logOf(t *testing.T, ms ...int) []byte {
	t.Helper()
	var buf bytes.Buffer
	w := reqlog.NewWriter(&buf, reqlog.Options{})
	for i, m := range ms {
		r := reqlog.Request{At: 1e18 + int64(m)*int64(time.Millisecond), Method: "GET", Target: "/r/" + string(rune('a'+i%26)), Status: 200}
		if err := w.Write(&r); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func opener(b []byte) func() (Source, io.Closer, error) {
	return func() (Source, io.Closer, error) {
		src, err := NewSource(bytes.NewReader(b), "", "", FieldMap{})
		return src, io.NopCloser(nil), err
	}
}

func TestScheduleOrderAndSpeed(t *testing.T) {
	s, err := NewSchedule(opener(logOf(t, 0, 10, 5, 30)), ScheduleOptions{Speed: 2})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	want := []struct {
		at     time.Duration
		target string
	}{{0, "/r/a"}, {2500 * time.Microsecond, "/r/c"}, {5 * time.Millisecond, "/r/b"}, {15 * time.Millisecond, "/r/d"}}
	for k, w := range want {
		at, stop := s.Due(uint64(k))
		it, ok := s.Take(uint64(k))
		if stop || !ok || at != w.at || it.Req.Target != w.target {
			t.Fatalf("request %d: at %v stop %v %q, want %v %q", k, at, stop, it.Req.Target, w.at, w.target)
		}
	}
	if _, stop := s.Due(4); !stop {
		t.Fatal("the schedule did not stop after the recording")
	}
	s.Close()
	if st := s.Stats(); st.Requests != 4 || st.Span != 30*time.Millisecond || st.Passes != 1 {
		t.Fatalf("stats %+v", st)
	}
}

// TestScheduleDueOutOfOrder: workers call Due in any order; each hit
// gets its own request.
func TestScheduleDueOutOfOrder(t *testing.T) {
	s, _ := NewSchedule(opener(logOf(t, 0, 1, 2, 3)), ScheduleOptions{})
	defer s.Close()
	for _, k := range []uint64{2, 0, 3, 1} {
		at, _ := s.Due(k)
		it, _ := s.Take(k)
		if at != time.Duration(k)*time.Millisecond || it.Req.Target != "/r/"+string(rune('a'+k)) {
			t.Fatalf("hit %d: %v %q", k, at, it.Req.Target)
		}
	}
}

func TestScheduleLoop(t *testing.T) {
	s, _ := NewSchedule(opener(logOf(t, 0, 10, 20, 30)), ScheduleOptions{Loop: true})
	defer s.Close()
	// period = span 30 ms + mean gap 10 ms
	for k, w := range []int{0, 10, 20, 30, 40, 50, 60, 70, 80} {
		at, stop := s.Due(uint64(k))
		s.Take(uint64(k))
		if stop || at != time.Duration(w)*time.Millisecond {
			t.Fatalf("request %d at %v, want %d ms", k, at, w)
		}
	}
	s.Close()
	if st := s.Stats(); st.Passes < 3 {
		t.Fatalf("passes %d", st.Passes)
	}
}

// TestScheduleLoopMalformedExamplesOnce: a looped recording counts its
// malformed line on every pass but shows it once.
func TestScheduleLoopMalformedExamplesOnce(t *testing.T) {
	b := append(logOf(t, 0, 10), "not json\n"...)
	s, _ := NewSchedule(opener(b), ScheduleOptions{Loop: true})
	for k := range uint64(6) { // three passes of two
		s.Due(k)
		s.Take(k)
	}
	s.Close()
	st := s.Stats()
	if st.Passes < 3 || st.Malformed < 3 || len(st.Examples) != 1 {
		t.Fatalf("%d passes, %d malformed, examples %q: want one example", st.Passes, st.Malformed, st.Examples)
	}
}

func TestScheduleReorderedBeyondWindow(t *testing.T) {
	ms := make([]int, Window+10)
	for i := range ms {
		ms[i] = 100 + i
	}
	ms = append(ms, 0) // recorded before everything, more than Window lines late
	s, _ := NewSchedule(opener(logOf(t, ms...)), ScheduleOptions{})
	var last time.Duration
	for k := uint64(0); ; k++ {
		at, stop := s.Due(k)
		if stop {
			break
		}
		s.Take(k)
		if at < last {
			t.Fatalf("request %d at %v, before %v", k, at, last)
		}
		last = at
	}
	s.Close()
	if st := s.Stats(); st.Reordered != 1 || st.Requests != int64(len(ms)) {
		t.Fatalf("stats %+v", st)
	}
}

// endless is a source of requests 1 ms apart for ever, counting reads.
type endless struct {
	n   atomic.Int64
	bad reqlog.Malformed
}

func (e *endless) Next() (reqlog.Request, error) {
	n := e.n.Add(1)
	return reqlog.Request{At: n * int64(time.Millisecond), Method: "GET", Target: "/"}, nil
}
func (e *endless) Malformed() *reqlog.Malformed { return &e.bad }

// TestScheduleReadsABoundedWindowAhead: memory flat in the file size —
// the reader stops about 2 × Window requests ahead of Due.
func TestScheduleReadsABoundedWindowAhead(t *testing.T) {
	src := &endless{}
	s, _ := NewSchedule(func() (Source, io.Closer, error) { return src, io.NopCloser(nil), nil }, ScheduleOptions{})
	defer s.Close()
	for k := uint64(0); k < 5000; k++ {
		s.Due(k)
		s.Take(k)
	}
	// Let the reader run as far as it can (a generous wait: only the bound is asserted).
	for prev := int64(-1); prev != src.n.Load(); {
		prev = src.n.Load()
		time.Sleep(20 * time.Millisecond)
	}
	if n, limit := src.n.Load(), int64(5000+2*Window+1); n > limit {
		t.Fatalf("read %d requests for 5000 scheduled: more than %d", n, limit)
	}
}

func TestTemplate(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"/users/42", "/users/{id}"},
		{"/users/42?x=1", "/users/{id}"},
		{"/todos/3f2a9c1e-0b7d-4c55-9a8e-1234567890ab/done", "/todos/{id}/done"},
		{"/blobs/deadbeef01", "/blobs/{id}"},
		{"/blobs/deadbeef", "/blobs/deadbeef"}, // hex without a digit: a word
		{"/v2/users", "/v2/users"},
		{"https://h.example/a/123#f", "/a/{id}"},
		{"http://h.example", "/"},
		{"", "/"},
	} {
		if got := Template(c.in); got != c.want {
			t.Errorf("Template(%q) = %q, want %q", c.in, got, c.want)
		}
	}
	r := newRoutes()
	for i := 0; i < MaxEndpoints+5; i++ {
		r.op("GET", "/p"+string(rune('a'+i%26))+string(rune('a'+i/26)))
	}
	if r.op("GET", "/new") != MaxEndpoints || r.name(MaxEndpoints) != Other || r.op("GET", "/pa"+"a") != 0 {
		t.Fatal("routes past MaxEndpoints are not 'other'")
	}
}

// countingSource counts the requests read from it.
type countingSource struct {
	Source
	n atomic.Int64
}

func (c *countingSource) Next() (reqlog.Request, error) {
	r, err := c.Source.Next()
	if err == nil {
		c.n.Add(1)
	}
	return r, err
}

// TestScheduleReadsAheadBeforeTheClock: by the time NewSchedule returns,
// the first window of the recording is read and its first request due,
// so the run's clock (which starts after) does not wait for the parsing.
func TestScheduleReadsAheadBeforeTheClock(t *testing.T) {
	ms := make([]int, 3*Window)
	for i := range ms {
		ms[i] = i
	}
	src := &countingSource{}
	b := logOf(t, ms...)
	s, err := NewSchedule(func() (Source, io.Closer, error) {
		var err error
		src.Source, err = NewSource(bytes.NewReader(b), "", "", FieldMap{})
		return src, io.NopCloser(nil), err
	}, ScheduleOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if n := src.n.Load(); n < Window {
		t.Errorf("%d requests read when the schedule was handed over, want the first window (%d) read before the run starts", n, Window)
	}
	if at, stop := s.Due(0); stop || at != 0 {
		t.Errorf("first request due at %v (stop %v), want 0", at, stop)
	}
}

// TestScheduleReadAheadBytes: a recording of large entries is read ahead
// only up to the read-ahead bytes, not Window entries of them: with
// nothing taken, the reader holds about ReadAhead and waits (before, it
// read 2 × Window entries, here the whole file: 48 MiB of bodies, 64 MiB in base64); every request is
// still scheduled once taken, in order, and Close ends a waiting reader.
func TestScheduleReadAheadBytes(t *testing.T) {
	const entries, size, budget = 48, 1 << 20, 4 << 20
	var buf bytes.Buffer
	w := reqlog.NewWriter(&buf, reqlog.Options{Bodies: true})
	body := bytes.Repeat([]byte("x"), size)
	for i := range entries {
		r := reqlog.Request{At: 1e18 + int64(i)*int64(time.Millisecond), Method: "POST", Target: "/echo", Body: body, Status: 200}
		if err := w.Write(&r); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	file := buf.Bytes()
	base := heapInUse()
	s, err := NewSchedule(opener(file), ScheduleOptions{ReadAhead: budget})
	if err != nil {
		t.Fatal(err)
	}
	time.Sleep(200 * time.Millisecond) // the reader reads what it may
	held := heapInUse() - base
	// The budget, the entry being parsed and the reader's buffers.
	if held > budget+8*size {
		t.Errorf("%d MiB read ahead with nothing taken (the file is %d MiB), want about the %d-MiB budget", held>>20, len(file)>>20, budget>>20)
	}
	for i := range uint64(entries) {
		if _, stop := s.Due(i); stop {
			t.Fatalf("schedule ended at request %d of %d", i, entries)
		}
		if it, ok := s.Take(i); !ok || len(it.Req.Body) != size {
			t.Fatalf("request %d: taken %v, %d-byte body", i, ok, len(it.Req.Body))
		}
	}
	if _, stop := s.Due(entries); !stop {
		t.Error("more requests than recorded")
	}
	s.Close()
	if st := s.Stats(); st.Requests != entries || st.ReadAheadWaits == 0 {
		t.Errorf("stats %+v: want %d requests and waits for room", st, entries)
	}
	// A reader waiting for room ends with Close.
	s, _ = NewSchedule(opener(file), ScheduleOptions{ReadAhead: budget})
	done := make(chan struct{})
	go func() { s.Close(); close(done) }()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("Close did not end a reader waiting for read-ahead room")
	}
}

// heapInUse is the live heap after a collection.
func heapInUse() int64 {
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return int64(m.HeapAlloc)
}

// TestTargetKeepsAURLInItsQuery: only a target that starts with a scheme
// is an absolute URL; a URL in an origin-form target's query
// (?next=https://…, OAuth's redirect_uri) stays in the query, instead of
// its path being sent and named.
func TestTargetKeepsAURLInItsQuery(t *testing.T) {
	u, _ := url.Parse("http://127.0.0.1:1")
	for _, host := range []string{"", HostRecorded} {
		s := &Scenario{u: u, o: Options{Host: host}}
		for in, want := range map[string]string{
			"/users?next=https://app.example/home": "/users?next=https://app.example/home",
			"/cb?redirect_uri=http://x/cb":         "/cb?redirect_uri=http://x/cb",
			"/users/[a](http://evil)":              "/users/[a](http://evil)",
			"https://h.example/a?b=http://c/d":     "/a?b=http://c/d",
			"HTTP://h.example":                     "/",
			"h2c+x.y://h/p":                        "/p",
		} {
			if got, _ := s.target(&reqlog.Request{Target: in}); got != want {
				t.Errorf("host %q: target(%q) = %q, want %q", host, in, got, want)
			}
		}
	}
	for in, want := range map[string]string{
		"/users/7?next=https://app.example/home": "/users/{id}",
		"/users/[a](http://evil)":                "/users/[a](http://evil)",
	} {
		if got := Template(in); got != want {
			t.Errorf("Template(%q) = %q, want %q", in, got, want)
		}
	}
}

// TestScheduleExtremeTimestamps: recorded times at either end of int64
// (a hostile or broken log) are gaps like any other: cut to MaxGap and
// counted, each request at or after the one before, never an offset
// that wrapped around (which sent a run of requests at once, early).
func TestScheduleExtremeTimestamps(t *testing.T) {
	var buf bytes.Buffer
	w := reqlog.NewWriter(&buf, reqlog.Options{})
	ats := []int64{math.MinInt64, 1e18, 1e18 + 1e6, math.MaxInt64, 1e18 + 2e6}
	for i, at := range ats {
		w.Write(&reqlog.Request{At: at, Method: "GET", Target: "/r/" + string(rune('a'+i))})
	}
	w.Flush()
	s, err := NewSchedule(opener(buf.Bytes()), ScheduleOptions{MaxGap: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	// In time order (the reorder window holds them all), the gap from
	// MinInt64 and the one to MaxInt64 are cut to 1 s.
	want := []time.Duration{0, time.Second, time.Second + time.Millisecond, time.Second + 2*time.Millisecond, 2*time.Second + 2*time.Millisecond}
	for k, w := range want {
		at, stop := s.Due(uint64(k))
		if _, ok := s.Take(uint64(k)); stop || !ok || at != w {
			t.Errorf("request %d at %v (stop %v), want %v", k, at, stop, w)
		}
	}
	s.Close()
	if st := s.Stats(); st.GapsCut != 2 || st.Requests != 5 {
		t.Errorf("stats %+v: want 2 gaps cut, 5 requests", st)
	}
}
