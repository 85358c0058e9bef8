package load

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/wirebench/wirebench/load/conn"
	"github.com/wirebench/wirebench/load/internal/loadtest"
	"github.com/wirebench/wirebench/results"
)

func TestParseStartAt(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		s    string
		want time.Time
	}{
		{"2026-11-23T18:00:00Z", time.Date(2026, 11, 23, 18, 0, 0, 0, time.UTC)},
		{"2026-11-23T19:00:00.25+01:00", time.Date(2026, 11, 23, 18, 0, 0, 250e6, time.UTC)},
		{"1795456800", time.Unix(1795456800, 0)},
		{"1795456800.000000001", time.Unix(1795456800, 1)},
		{" 1795456800.5 ", time.Unix(1795456800, 500e6)},
	} {
		got, err := ParseStartAt(tc.s)
		if err != nil || !got.Equal(tc.want) {
			t.Errorf("ParseStartAt(%q) = %v, %v; want %v", tc.s, got, err, tc.want)
		}
	}
	for _, bad := range []string{"", "now", "1e9", "Inf", "NaN", "0x10", "-5", "1.", ".5", "123456789012", "1.1234567890", "2026-11-23 18:00:00", "18:00"} {
		if got, err := ParseStartAt(bad); err == nil || !errors.Is(err, ErrOptions) {
			t.Errorf("ParseStartAt(%q) = %v, %v; want ErrOptions", bad, got, err)
		}
	}
}

func FuzzParseStartAt(f *testing.F) {
	for _, s := range []string{"2026-11-23T18:00:00Z", "1795456800.5", "1e9", "99999999999.999999999"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		got, err := ParseStartAt(s)
		if err != nil {
			return
		}
		if unixRE().MatchString(strings.TrimSpace(s)) && (got.Unix() < 0 || got.Unix() > 1e11) {
			t.Fatalf("%q: Unix time %v out of range", s, got)
		}
	})
}

// TestWaitStart: a run waits for its StartAt and starts exactly then; a
// start long past or too far ahead is refused; cancelling ends the wait.
func TestWaitStart(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	at := time.Now().Add(150 * time.Millisecond).Round(0)
	o := Options{Options: results.Options{StartAt: at}}
	got, err := waitStart(ctx, &o)
	if err != nil || !got.Equal(at) {
		t.Fatalf("start %v, %v; want %v", got, err, at)
	}
	if time.Now().Before(at) {
		t.Error("returned before the start time")
	}
	if _, err := waitStart(ctx, &Options{Options: results.Options{StartAt: time.Now().Add(-MaxStartLate - 500*time.Millisecond)}}); !errors.Is(err, ErrStart) || !strings.Contains(err.Error(), "passed") {
		t.Errorf("a start long past: %v, want ErrStart", err)
	}
	late := time.Now().Add(-MaxStartLate / 2) // late but within the limit: starts now, on the shared schedule
	if got, err := waitStart(ctx, &Options{Options: results.Options{StartAt: late}}); err != nil || !got.Equal(late) {
		t.Errorf("a start %v late: %v, %v", MaxStartLate/2, got, err)
	}
	if _, err := waitStart(ctx, &Options{Options: results.Options{StartAt: time.Now().Add(MaxStartAhead + time.Hour)}}); !errors.Is(err, ErrOptions) {
		t.Errorf("a start 25 h away: %v, want ErrOptions", err)
	}
	cctx, cancel := context.WithTimeout(ctx, 50*time.Millisecond)
	defer cancel()
	if _, err := waitStart(cctx, &Options{Options: results.Options{StartAt: time.Now().Add(time.Hour)}}); !errors.Is(err, context.DeadlineExceeded) || !errors.Is(err, ErrStart) {
		t.Errorf("cancelled wait: %v", err)
	}
}

// TestFileBarrier: three segments arriving at different times (and with
// clocks a little apart) all get the same start: the latest arrival plus
// the lead.
func TestFileBarrier(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(t.TempDir(), "barrier") // created by the first
	const lead = 300 * time.Millisecond
	skew := []time.Duration{0, 40 * time.Millisecond, -30 * time.Millisecond}
	starts := make([]time.Time, 3)
	arrived := make([]time.Time, 3)
	var wg sync.WaitGroup
	for i := range 3 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			time.Sleep(time.Duration(i) * 60 * time.Millisecond) // arrive one after another
			b := FileBarrier{Dir: dir, Segment: results.Segment{I: i + 1, N: 3}, Lead: lead, Timeout: 10 * time.Second,
				now: func() time.Time { arrived[i] = time.Now().Add(skew[i]); return arrived[i] }}
			var err error
			if starts[i], err = b.Wait(context.Background()); err != nil {
				t.Error(err)
			}
		}()
	}
	wg.Wait()
	latest := arrived[0]
	for _, a := range arrived {
		if a.After(latest) {
			latest = a
		}
	}
	for i, s := range starts {
		if !s.Equal(latest.Add(lead)) {
			t.Errorf("segment %d starts %v, want %v (latest arrival + lead)", i+1, s, latest.Add(lead))
		}
	}
	// The same index again (a rerun in the same directory) is refused.
	b := FileBarrier{Dir: dir, Segment: results.Segment{I: 2, N: 3}, Timeout: time.Second}
	if _, err := b.Wait(context.Background()); !errors.Is(err, ErrStart) || !strings.Contains(err.Error(), "already arrived") {
		t.Errorf("second arrival of 2/3: %v", err)
	}
	// A segment of a 4-way split meets files of a 3-way one.
	b = FileBarrier{Dir: dir, Segment: results.Segment{I: 4, N: 4}, Timeout: time.Second}
	if _, err := b.Wait(context.Background()); !errors.Is(err, ErrStart) || !strings.Contains(err.Error(), "3-way") {
		t.Errorf("4-way segment in a 3-way barrier: %v", err)
	}
}

// TestFileBarrierTimeout: segments that never come are named; a file
// being written (no newline yet) does not count as an arrival.
func TestFileBarrierTimeout(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "ready-3-of-3"), []byte("2026-11-23T18:00:00Z"), 0o644) // half written
	os.WriteFile(filepath.Join(dir, "unrelated.json"), []byte("{}"), 0o644)
	b := FileBarrier{Dir: dir, Segment: results.Segment{I: 1, N: 3}, Timeout: 100 * time.Millisecond}
	_, err := b.Wait(context.Background())
	if !errors.Is(err, ErrStart) || !strings.Contains(err.Error(), "segments 2/3, 3/3 of 3 never arrived") {
		t.Errorf("timeout: %v", err)
	}
	if _, err := (FileBarrier{Dir: dir}).Wait(context.Background()); !errors.Is(err, ErrOptions) {
		t.Errorf("a barrier without a segment: %v", err)
	}
}

// TestRunBarrierLate: a run whose barrier releases it after the start has
// passed (a lead too short for the others to arrive) fails, saying so,
// rather than firing a burst of overdue requests.
func TestRunBarrierLate(t *testing.T) {
	t.Parallel()
	ts := loadtest.StartHTTP(t, loadtest.OK)
	sc, err := NewRaw(RawOptions{Options: conn.Options{URL: ts.URL, Timeout: time.Second}})
	if err != nil {
		t.Fatal(err)
	}
	_, err = Run(context.Background(), Options{Options: results.Options{Rate: 10, Duration: time.Second}, Barrier: fixedBarrier(time.Now().Add(-2 * MaxStartLate))}, sc)
	if !errors.Is(err, ErrStart) || ts.Requests.Load() != 0 {
		t.Errorf("late barrier: %v, %d requests sent", err, ts.Requests.Load())
	}
}

type fixedBarrier time.Time

func (b fixedBarrier) Wait(context.Context) (time.Time, error) { return time.Time(b), nil }

// FuzzBarrierFile: whatever a barrier file holds, reading the barrier
// neither panics nor counts as an arrival anything but one RFC 3339
// time on a line.
func FuzzBarrierFile(f *testing.F) {
	f.Add("2026-11-23T18:00:00.5Z\n")
	f.Add("2026-11-23T18:00:00Z")
	f.Add("\n\n")
	f.Add("9999-99-99T99:99:99Z\n")
	f.Fuzz(func(t *testing.T, content string) {
		dir := t.TempDir()
		if err := os.WriteFile(filepath.Join(dir, "ready-1-of-1"), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
		times, missing, err := FileBarrier{Dir: dir, Segment: results.Segment{I: 1, N: 1}}.read()
		if err != nil {
			t.Fatal(err)
		}
		if len(times)+len(missing) != 1 {
			t.Fatalf("%d times, %d missing of 1", len(times), len(missing))
		}
		if len(times) == 1 {
			want, err := time.Parse(time.RFC3339Nano, strings.TrimSuffix(content, "\n"))
			if err != nil || !want.Equal(times[0]) || !strings.HasSuffix(content, "\n") {
				t.Fatalf("%q read as %v", content, times[0])
			}
		}
	})
}
