package load

import (
	"context"
	"errors"
	"slices"
	"testing"
	"time"
)

// TestSegmentPacerInterleaves: the n segments' schedules are disjoint and
// together exactly the whole run's, for a constant rate and a ramp, and
// segment i's first request is due at the whole run's arrival i−1 (not
// at 0 with the others').
func TestSegmentPacerInterleaves(t *testing.T) {
	t.Parallel()
	pacers := map[string]Pacer{
		"constant": ConstantPacer{Rate: 1000},
		"ramp":     RampPacer{Start: 10, Stages: []Stage{{time.Second, 500}, {time.Second, 500}, {500 * time.Millisecond, 0}}},
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
				p := segmentPacer{whole: whole, seg: Segment{I: i, N: n}}
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

// TestSegmentStripes: a bounded open-loop run's requests split into the
// stripes segmentPacer sends; they add up to the whole run's.
func TestSegmentStripes(t *testing.T) {
	t.Parallel()
	for _, n := range []int{1, 2, 3, 4, 7} {
		for _, q := range []int64{0, 1, 3, 4, 5, 100, 1001} {
			var sum int64
			for i := 1; i <= n; i++ {
				s := Segment{I: i, N: n}
				var want int64 // arrivals k < q with k ≡ i−1 (mod n), counted
				for k := int64(i - 1); k < q; k += int64(n) {
					want++
				}
				if got := s.stripe(q); got != want {
					t.Errorf("stripe %d of %d of q=%d: %d, want %d", i, n, q, got, want)
				}
				sum += s.stripe(q)
			}
			if sum != q {
				t.Errorf("n=%d q=%d: stripes add to %d", n, q, sum)
			}
		}
	}
	o, err := Options{Rate: 100, Requests: 10, Segment: Segment{I: 4, N: 4}}.withDefaults()
	if err != nil || o.Requests != 2 || o.Rate != 25 {
		t.Errorf("segment 4/4 of -r 100 -n 10: %v, %d requests at %g/s; want 2 (arrivals 3 and 7) at 25/s", err, o.Requests, o.Rate)
	}
	o, err = Options{Requests: 10, Concurrency: 4, Segment: Segment{I: 4, N: 4}}.withDefaults()
	if err != nil || o.Requests != 3 {
		t.Errorf("closed loop keeps the share rule: %v, %d requests, want 3", err, o.Requests)
	}
}

func TestParseSegmentEnv(t *testing.T) {
	t.Parallel()
	env := func(v string) func(string) string {
		return func(k string) string {
			if k == IndexEnv {
				return v
			}
			return ""
		}
	}
	for _, tc := range []struct {
		s, idx string
		want   Segment
		ok     bool
	}{
		{"auto/4", "0", Segment{1, 4}, true},
		{"auto/4", "3", Segment{4, 4}, true},
		{"auto/1", "0", Segment{1, 1}, true},
		{"2/4", "3", Segment{2, 4}, true}, // explicit wins over the environment
		{"auto/4", "4", Segment{}, false},
		{"auto/4", "-1", Segment{}, false},
		{"auto/4", "", Segment{}, false},
		{"auto/4", "x", Segment{}, false},
		{"auto/0", "0", Segment{}, false},
		{"auto/", "0", Segment{}, false},
		{"auto", "0", Segment{}, false},
	} {
		got, err := ParseSegmentEnv(tc.s, env(tc.idx))
		if (err == nil) != tc.ok || (tc.ok && got != tc.want) {
			t.Errorf("ParseSegmentEnv(%q) with %s=%q = %v, %v; want %v ok=%v", tc.s, IndexEnv, tc.idx, got, err, tc.want, tc.ok)
		}
		if err != nil && !errors.Is(err, ErrOptions) {
			t.Errorf("%q: error %v is not ErrOptions", tc.s, err)
		}
	}
	if _, err := ParseSegment("auto/4"); err == nil {
		t.Error("ParseSegment (no environment) took auto/4")
	}
}

func FuzzParseSegment(f *testing.F) {
	for _, s := range []string{"1/4", "auto/4", "4/4", "0/1", "auto/", "9999999999/1", "1/-1"} {
		f.Add(s, "2")
	}
	f.Fuzz(func(t *testing.T, s, idx string) {
		seg, err := ParseSegmentEnv(s, func(string) string { return idx })
		if err != nil {
			return
		}
		if seg.N < 1 || seg.I < 1 || seg.I > seg.N {
			t.Fatalf("%q (index %q) gave %v", s, idx, seg)
		}
		if back, err := ParseSegment(seg.String()); err != nil || back != seg {
			t.Fatalf("%v does not round-trip: %v, %v", seg, back, err)
		}
	})
}

// TestSegmentsRunTogether: four segments of an open-loop run, started
// together in one process, send exactly the whole run's requests, with
// one start instant, and their merge is the whole test (its options,
// not four shares added up).
func TestSegmentsRunTogether(t *testing.T) {
	t.Parallel()
	ts := startServer(t, okHandler)
	sc, err := NewRaw(RawOptions{URL: ts.URL, Timeout: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	// 100/s for 1 s: the whole schedule has 100 arrivals (k/100 < 1). The
	// last is due 10 ms before -d: an arrival a worker reaches after -d is
	// not sent (see the note in run.go's work loop), and a loaded 2-CPU
	// machine overshot the 5 ms that 200/s for 500 ms left.
	start := time.Now().Add(300 * time.Millisecond).Round(0)
	rs := make([]*Result, 4)
	errs := make(chan error, 4)
	for i := range rs {
		go func() {
			var err error
			rs[i], err = Run(context.Background(), Options{Rate: 100, Duration: time.Second, Concurrency: 8,
				Segment: Segment{I: i + 1, N: 4}, StartAt: start}, sc)
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
	m, err := Merge(rs...)
	if err != nil {
		t.Fatal(err)
	}
	if m.Requests != 100 || ts.requests.Load() != 100 || m.Failed != 0 {
		t.Errorf("merged %d requests (%d failed), server saw %d; want 100", m.Requests, m.Failed, ts.requests.Load())
	}
	if m.Options.Rate != 100 || m.Options.Concurrency != 8 || m.Options.Segment != (Segment{}) || m.Options.Duration != time.Second {
		t.Errorf("merged options %+v: want the whole test's (rate 100, 8 VUs, 1s)", m.Options)
	}
	// The window ends when the last segment stopped issuing: after the
	// last arrival (990 ms), at most at -d (give or take the nanoseconds
	// by which the wall clock, slewed, drifts from the monotonic one).
	if m.Window < 990*time.Millisecond || m.Window > time.Second+time.Microsecond {
		t.Errorf("merged window %v, want 990–1000 ms", m.Window)
	}
}
