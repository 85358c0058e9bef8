package load

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/wirebench/wirebench/internal/testkit"
	"github.com/wirebench/wirebench/load/conn"
	"github.com/wirebench/wirebench/load/internal/loadtest"
	"github.com/wirebench/wirebench/results"
)

// TestSegmentPacerInterleaves: the n segments' schedules are disjoint and
// together exactly the whole run's, for a constant rate and a ramp, and
// segment i's first request is due at the whole run's arrival i−1 (not
// at 0 with the others').
func TestSegmentPacerInterleaves(t *testing.T) {
	t.Parallel()
	pacers := map[string]Pacer{
		"constant": ConstantPacer{Rate: 1000},
		"ramp":     RampPacer{Start: 10, Stages: []results.Stage{{Duration: time.Second, Target: 500}, {Duration: time.Second, Target: 500}, {Duration: 500 * time.Millisecond, Target: 0}}},
	}
	const horizon = 2 * time.Second // the constant pacer never stops by itself
	for name, whole := range pacers {
		var want []time.Duration
		for k := uint64(0); ; k++ {
			at, stop := whole.Due(k)
			if stop || at >= horizon {
				break
			}
			want = append(want, at)
		}
		if len(want) < 500 {
			t.Fatalf("%s: whole schedule has only %d arrivals", name, len(want))
		}
		for _, n := range []int{1, 2, 3, 4, 7} {
			var got []time.Duration
			for i := 1; i <= n; i++ {
				p := segmentPacer{whole: whole, seg: results.Segment{I: i, N: n}}
				if at, _ := p.Due(0); at != want[i-1] {
					t.Errorf("%s n=%d: segment %d starts at %v, want the whole run's arrival %d at %v", name, n, i, at, i-1, want[i-1])
				}
				for j := uint64(0); ; j++ {
					at, stop := p.Due(j)
					if stop || at >= horizon {
						break
					}
					got = append(got, at)
				}
			}
			slices.Sort(got)
			if !slices.Equal(got, want) {
				t.Errorf("%s n=%d: the segments' union has %d arrivals, the whole run %d (or different times)", name, n, len(got), len(want))
			}
		}
	}
}

// TestSegmentsRunTogether: four segments of an open-loop run, started
// together in one process, send exactly the whole run's requests, with
// one start instant, and their merge is the whole test (its options,
// not four shares added up). Bounded by count (-n 100) in the main
// suite: a count does not depend on the machine's speed. Bounded by time
// (-d 1s) with WIREBENCH_TIMING=1 only: an arrival a worker reaches after
// -d is not sent (see the note in run.go's work loop), so a loaded box
// sent 91 of 100.
func TestSegmentsRunTogether(t *testing.T) {
	t.Parallel()
	for _, bound := range []string{"requests", "duration"} {
		t.Run(bound, func(t *testing.T) {
			t.Parallel()
			whole := results.Options{Rate: 100, Concurrency: 8}
			if bound == "requests" {
				whole.Requests = 100
			} else {
				testkit.NeedTiming(t)
				// 100/s for 1 s: the whole schedule has 100 arrivals
				// (k/100 < 1), the last due 10 ms before -d.
				whole.Duration = time.Second
			}
			segmentsRunTogether(t, whole)
		})
	}
}

func segmentsRunTogether(t *testing.T, whole results.Options) {
	ts := loadtest.StartHTTP(t, loadtest.OK)
	sc, err := NewRaw(RawOptions{Options: conn.Options{URL: ts.URL, Timeout: 30 * time.Second}})
	if err != nil {
		t.Fatal(err)
	}
	// A second ahead: the four Runs must all reach their start before it
	// (MaxStartLate forgives a second more).
	start := time.Now().Add(time.Second).Round(0)
	rs := make([]*results.Load, 4)
	errs := make(chan error, 4)
	for i := range rs {
		go func() {
			o := whole
			o.Segment, o.StartAt = results.Segment{I: i + 1, N: 4}, start
			var err error
			rs[i], err = Run(context.Background(), Options{Options: o}, sc)
			errs <- err
		}()
	}
	for range rs {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
	for i, r := range rs {
		if !r.Start.Equal(start) || !r.Options.StartAt.Equal(start) || r.Test == nil || !r.Test.StartAt.Equal(start) {
			t.Errorf("segment %d started %v (options %v), want %v", i+1, r.Start, r.Options.StartAt, start)
		}
		if r.Requests != 25 {
			t.Errorf("segment %d sent %d requests, want 25 (every 4th of 100)", i+1, r.Requests)
		}
	}
	m, err := results.Merge(rs...)
	if err != nil {
		t.Fatal(err)
	}
	if m.Requests != 100 || ts.Requests.Load() != 100 || m.Failed != 0 {
		t.Errorf("merged %d requests (%d failed), server saw %d; want 100", m.Requests, m.Failed, ts.Requests.Load())
	}
	if m.Options.Rate != 100 || m.Options.Concurrency != 8 || m.Options.Segment != (results.Segment{}) ||
		m.Options.Duration != whole.Duration || m.Options.Requests != whole.Requests {
		t.Errorf("merged options %+v: want the whole test's %+v", m.Options, whole)
	}
	// The window ends when the last segment stopped issuing: after the
	// last arrival (990 ms), at most at -d (give or take the nanoseconds
	// by which the wall clock, slewed, drifts from the monotonic one).
	if whole.Duration > 0 && (m.Window < 990*time.Millisecond || m.Window > time.Second+time.Microsecond) {
		t.Errorf("merged window %v, want 990–1000 ms", m.Window)
	}
}

// TestSegmentStripesOptions: the engine applies the stripes of a bounded
// open-loop run, and the share rule in closed loop (results.TestSegmentStripes
// checks the stripes themselves).
func TestSegmentStripesOptions(t *testing.T) {
	t.Parallel()
	o, err := Options{Options: results.Options{Rate: 100, Requests: 10, Segment: results.Segment{I: 4, N: 4}}}.withDefaults()
	if err != nil || o.Requests != 2 || o.Rate != 25 {
		t.Errorf("segment 4/4 of -r 100 -n 10: %v, %d requests at %g/s; want 2 (arrivals 3 and 7) at 25/s", err, o.Requests, o.Rate)
	}
	o, err = Options{Options: results.Options{Requests: 10, Concurrency: 4, Segment: results.Segment{I: 4, N: 4}}}.withDefaults()
	if err != nil || o.Requests != 3 {
		t.Errorf("closed loop keeps the share rule: %v, %d requests, want 3", err, o.Requests)
	}
}
