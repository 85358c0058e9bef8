package load

import (
	"testing"
	"time"

	"github.com/wirebench/wirebench/results"
)

func TestConstantPacer(t *testing.T) {
	t.Parallel()
	p := ConstantPacer{Rate: 1000}
	for _, tc := range []struct {
		hit  uint64
		want time.Duration
	}{{0, 0}, {1, time.Millisecond}, {2500, 2500 * time.Millisecond}} {
		if got, stop := p.Due(tc.hit); stop || got != tc.want {
			t.Errorf("Due(%d) = %v, %v; want %v", tc.hit, got, stop, tc.want)
		}
	}
	if _, stop := (ConstantPacer{}).Due(0); !stop {
		t.Error("rate 0 must stop")
	}
}

// TestRampPacer counts arrivals per stage: a ramp 0→100/s over 2 s holds
// 100 arrivals, a flat 100/s for 1 s another 100, then the schedule stops.
func TestRampPacer(t *testing.T) {
	t.Parallel()
	p := RampPacer{Stages: []results.Stage{{Duration: 2 * time.Second, Target: 100}, {Duration: time.Second, Target: 100}}}
	counts := map[int]int{}
	n := 0
	for hit := uint64(0); ; hit++ {
		at, stop := p.Due(hit)
		if stop {
			break
		}
		counts[int(at/time.Second)]++
		n++
	}
	// Linear ramp: 25 arrivals in the first second, 75 in the second.
	want := map[int]int{0: 25, 1: 75, 2: 100}
	for s, w := range want {
		if d := counts[s] - w; d < -1 || d > 1 {
			t.Errorf("second %d: %d arrivals, want %d±1", s, counts[s], w)
		}
	}
	if n < 199 || n > 201 {
		t.Errorf("%d arrivals in total, want 200±1", n)
	}
	if w, _ := Pace(p, 2*time.Second, 100); w < -time.Millisecond || w > time.Millisecond {
		t.Errorf("Pace at 2s after 100 hits = %v, want ~0", w)
	}
}

func TestStages(t *testing.T) {
	t.Parallel()
	st, err := ParseStages("30s:50,1m:50,30s:100")
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		at   time.Duration
		want float64
		done bool
	}{
		{0, 0, false}, {15 * time.Second, 25, false}, {45 * time.Second, 50, false},
		{105 * time.Second, 75, false}, {3 * time.Minute, 100, true},
	}
	for _, tc := range tests {
		v, done := stageValue(0, st, tc.at)
		if v != tc.want || done != tc.done {
			t.Errorf("at %v: %v, %v; want %v, %v", tc.at, v, done, tc.want, tc.done)
		}
	}
	for _, bad := range []string{"", "30s", "x:1", "1s:-1", "1s:y"} {
		if _, err := ParseStages(bad); err == nil {
			t.Errorf("ParseStages(%q) succeeded", bad)
		}
	}
}
