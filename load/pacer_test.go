package load

import (
	"context"
	"errors"
	"math"
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

// TestPoissonPacer checks the gaps of seeded Poisson arrivals at 1000/s:
// their mean is 1/rate and their coefficient of variation 1 (the
// exponential's; the even pacing's is 0), within what 200,000 gaps allow
// (standard errors 0.22% and 0.5%: bounds of 1% and 2% are over 4 of
// them). Exact and seeded: no clock is read.
func TestPoissonPacer(t *testing.T) {
	t.Parallel()
	const n, rate = 200_000, 1000.0
	p := NewPoissonPacer(ConstantPacer{Rate: rate}, 7)
	var sum, sq float64
	prev, _ := p.Due(0)
	if prev != 0 {
		t.Fatalf("the first arrival is due at %v, want 0", prev)
	}
	for k := uint64(1); k <= n; k++ {
		at, stop := p.Due(k)
		if stop || at < prev {
			t.Fatalf("Due(%d) = %v, %v after %v", k, at, stop, prev)
		}
		g := (at - prev).Seconds()
		sum, sq, prev = sum+g, sq+g*g, at
	}
	mean := sum / n
	cv := math.Sqrt(sq/n-mean*mean) / mean
	t.Logf("mean gap %.6f s (want %.6f), coefficient of variation %.4f (want 1)", mean, 1/rate, cv)
	if math.Abs(mean*rate-1) > 0.01 {
		t.Errorf("mean gap %.6f s, want %.6f ± 1%%", mean, 1/rate)
	}
	if math.Abs(cv-1) > 0.02 {
		t.Errorf("coefficient of variation %.4f, want 1 ± 0.02", cv)
	}
	// The even pacing's gaps do not vary at all.
	u := ConstantPacer{Rate: rate}
	for k := uint64(1); k < 1000; k++ {
		a, _ := u.Due(k - 1)
		b, _ := u.Due(k)
		if b-a != time.Millisecond {
			t.Fatalf("uniform gap %d: %v, want 1ms", k, b-a)
		}
	}
}

// TestPoissonPacerSameSeedSameSchedule asks two pacers of one seed for
// their arrivals in different orders (workers claim in order but ask the
// pacer in any order, and a segment asks for every n-th): the schedules
// are identical; another seed's is not.
func TestPoissonPacerSameSeedSameSchedule(t *testing.T) {
	t.Parallel()
	const n = 5000
	a := NewPoissonPacer(ConstantPacer{Rate: 500}, 3)
	b := NewPoissonPacer(ConstantPacer{Rate: 500}, 3)
	c := NewPoissonPacer(ConstantPacer{Rate: 500}, 4)
	want := make([]time.Duration, n)
	for k := range want {
		want[k], _ = a.Due(uint64(k))
	}
	asked := 0
	for k := n - 1; k >= 0; k -= 3 { // backwards, across checkpoints
		if got, _ := b.Due(uint64(k)); got != want[k] {
			t.Fatalf("arrival %d: %v, want %v (same seed)", k, got, want[k])
		}
		asked++
	}
	seg := segmentPacer{whole: b, seg: results.Segment{I: 2, N: 3}}
	for j := range uint64(n / 3) {
		if got, _ := seg.Due(j); got != want[1+3*j] {
			t.Fatalf("segment 2/3's arrival %d: %v, want %v", j, got, want[1+3*j])
		}
	}
	same := 0
	for k := 1; k < n; k++ {
		if got, _ := c.Due(uint64(k)); got == want[k] {
			same++
		}
	}
	if asked < n/3 || same > n/100 {
		t.Errorf("asked %d arrivals; another seed shares %d of %d arrival times", asked, same, n)
	}
}

// TestPoissonRamp: a Poisson ramp keeps its stages' arrival counts (the
// time change of a unit Poisson process by the ramp's integral): 2,000
// over a ramp 0→2000/s of 2 s and 2,000 over a flat second, within a few
// standard deviations (√2000 ≈ 45).
func TestPoissonRamp(t *testing.T) {
	t.Parallel()
	p := NewPoissonPacer(RampPacer{Stages: []results.Stage{{Duration: 2 * time.Second, Target: 2000}, {Duration: time.Second, Target: 2000}}}, DefaultSeed)
	var ramp, flat int
	for hit := uint64(0); ; hit++ {
		at, stop := p.Due(hit)
		if stop {
			break
		}
		if at < 2*time.Second {
			ramp++
		} else {
			flat++
		}
	}
	if math.Abs(float64(ramp-2000)) > 200 || math.Abs(float64(flat-2000)) > 200 {
		t.Errorf("arrivals: %d in the ramp, %d in the flat second; want about 2000 each", ramp, flat)
	}
}

// TestRunRecordsArrivals: an open loop's result names its arrival
// process (uniform unless asked, Poisson with its seed); a closed loop's
// names none.
func TestRunRecordsArrivals(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		o    results.Options
		want results.Arrivals
		seed uint64
	}{
		{results.Options{Rate: 2000, Requests: 20}, results.Uniform, 0},
		{results.Options{Rate: 2000, Requests: 20, Arrivals: results.Poisson}, results.Poisson, DefaultSeed},
		{results.Options{Rate: 2000, Requests: 20, Arrivals: results.Poisson, Seed: 5}, results.Poisson, 5},
		{results.Options{Requests: 20, Arrivals: results.Poisson}, "", 0},
	} {
		tc.o.Concurrency = 4
		res, err := Run(context.Background(), Options{Options: tc.o}, turnScenario{})
		if err != nil {
			t.Fatal(err)
		}
		if res.Options.Arrivals != tc.want || res.Options.Seed != tc.seed || res.Requests != 20 {
			t.Errorf("%+v: arrivals %q seed %d, %d requests; want %q %d, 20", tc.o, res.Options.Arrivals, res.Options.Seed, res.Requests, tc.want, tc.seed)
		}
	}
	if _, err := Run(context.Background(), Options{Options: results.Options{Rate: 10, Arrivals: "bursty"}}, turnScenario{}); !errors.Is(err, ErrOptions) {
		t.Errorf("arrivals bursty: %v", err)
	}
}

// TestScheduled counts a schedule's arrivals in a window as a walk would:
// exactly rate × d for even pacing, the draw's own count for Poisson
// (which a capacity step is judged against), capped by -n.
func TestScheduled(t *testing.T) {
	t.Parallel()
	walk := func(p Pacer, d time.Duration) (n int64) {
		for k := uint64(0); ; k++ {
			if at, stop := p.Due(k); stop || at >= d {
				return n
			}
			n++
		}
	}
	for _, tc := range []struct {
		p    Pacer
		d    time.Duration
		want int64
	}{
		{ConstantPacer{Rate: 1000}, time.Second, 1000},
		{ConstantPacer{Rate: 3}, 1500 * time.Millisecond, 5},
		{NewPoissonPacer(ConstantPacer{Rate: 1000}, 1), time.Second, -1},
		{NewPoissonPacer(ConstantPacer{Rate: 1000}, 2), 3 * time.Second, -1},
		{ConstantPacer{}, time.Second, 0},
	} {
		want := tc.want
		if want < 0 {
			want = walk(tc.p, tc.d)
		}
		if got := scheduled(tc.p, tc.d, 0); got != want {
			t.Errorf("%T %v: %d arrivals, want %d", tc.p, tc.d, got, want)
		}
	}
	if got := scheduled(ConstantPacer{Rate: 1000}, time.Second, 10); got != 10 {
		t.Errorf("capped at 10: %d", got)
	}
}
