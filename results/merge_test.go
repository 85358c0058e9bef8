package results

import (
	"bytes"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/wirebench/wirebench/measure"
)

func emptyResult(seg Segment) *Load {
	return &Load{
		Schema: LoadSchema, Scenario: "raw", Options: Options{Segment: seg, Concurrency: 1},
		Latency: measure.NewHistogram(), Service: measure.NewHistogram(), Lag: measure.NewHistogram(),
		Ops:    []Op{{Name: "GET /", Latency: measure.NewHistogram(), Service: measure.NewHistogram()}},
		Status: map[string]int64{}, Failures: map[string]int64{},
	}
}

// throughFile writes r as a result file and reads it back, as merge
// reads the files of separate processes.
func throughFile(t *testing.T, r *Load) *Load {
	t.Helper()
	var buf bytes.Buffer
	if err := r.WriteJSON(&buf); err != nil {
		t.Fatal(err)
	}
	back, err := ReadLoad(&buf)
	if err != nil {
		t.Fatal(err)
	}
	return back
}

// TestMergeExact: segments written to result files and merged hold the
// same histogram as one result that recorded every value.
func TestMergeExact(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(3, 4))
	whole := emptyResult(Segment{})
	segs := []*Load{emptyResult(Segment{1, 3}), emptyResult(Segment{2, 3}), emptyResult(Segment{3, 3})}
	for i := range 20000 {
		d := time.Duration(rng.ExpFloat64() * float64(2*time.Millisecond))
		for _, r := range []*Load{whole, segs[i%3]} {
			r.Latency.Record(d)
			r.Service.Record(d / 2)
			r.Ops[0].Latency.Record(d)
			r.Requests++
			r.Status["200"]++
		}
	}
	var files []*Load
	for _, s := range segs {
		files = append(files, throughFile(t, s))
	}
	m, err := Merge(files...)
	if err != nil {
		t.Fatal(err)
	}
	if !m.Latency.Equal(whole.Latency) || !m.Service.Equal(whole.Service) || !m.Ops[0].Latency.Equal(whole.Ops[0].Latency) {
		t.Error("merged histograms differ from the single run's")
	}
	if m.Requests != 20000 || m.Status["200"] != 20000 || len(m.Segments) != 3 {
		t.Errorf("merged %d requests, status %v, segments %v", m.Requests, m.Status, m.Segments)
	}
	if _, err := Merge(); err == nil {
		t.Error("Merge() of nothing succeeded")
	}
}

// TestSegmentShares: the split rule gives shares that add up exactly.
func TestSegmentShares(t *testing.T) {
	t.Parallel()
	for _, n := range []int{1, 2, 3, 7} {
		for _, q := range []int64{0, 1, 5, 100, 1001} {
			var sum int64
			for i := 1; i <= n; i++ {
				sum += Segment{i, n}.Share(q)
			}
			if sum != q {
				t.Errorf("n=%d q=%d: shares add to %d", n, q, sum)
			}
		}
	}
	for _, bad := range []string{"0/3", "4/3", "1/0", "x", "1/"} {
		if _, err := ParseSegment(bad); err == nil {
			t.Errorf("ParseSegment(%q) succeeded", bad)
		}
	}
}

// TestMergeWindow: the merge's rates are over the segments' measured
// windows (the graceful stop excluded), from the first start to the last
// window's end.
func TestMergeWindow(t *testing.T) {
	t0 := time.Date(2026, 11, 23, 10, 0, 0, 0, time.UTC)
	seg := func(startOff, window, stop time.Duration, n int64) *Load {
		return &Load{Scenario: "raw", Start: t0.Add(startOff), End: t0.Add(startOff + window + stop),
			Window: window, Requests: n, Latency: measure.NewHistogram(), Service: measure.NewHistogram(),
			Lag: measure.NewHistogram()}
	}
	m, err := Merge(seg(0, 10*time.Second, 2*time.Second, 1000), seg(500*time.Millisecond, 10*time.Second, 1*time.Second, 1000))
	if err != nil {
		t.Fatal(err)
	}
	if m.Window != 10500*time.Millisecond || m.Measured() != 10500*time.Millisecond {
		t.Fatalf("window %v, want 10.5s (not the 12s span with the graceful stop)", m.Window)
	}
	if m.End.Sub(m.Start) != 12*time.Second {
		t.Fatalf("span %v, want 12s", m.End.Sub(m.Start))
	}
}
