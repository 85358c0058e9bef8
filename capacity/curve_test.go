package capacity

import (
	"strings"
	"testing"
	"time"

	"github.com/wirebench/wirebench/measure"
	"github.com/wirebench/wirebench/results"
)

// curveStep is a step of a synthetic curve: its rate, verdict and p99,
// over one second (rate requests).
func curveStep(rate float64, verdict string, p99 time.Duration) results.CapacityStep {
	l := &results.Load{Latency: measure.NewHistogram(), Requests: int64(rate)}
	l.Latency.Record(p99)
	return results.CapacityStep{Offered: rate, Verdict: verdict, P99: p99, Requests: int64(rate), Load: l}
}

// TestNonMonotonic: which failing steps the curve before them
// contradicts, on synthetic sequences of step results.
func TestNonMonotonic(t *testing.T) {
	t.Parallel()
	o, err := Options{SLO: slo(t, "p99<20ms")}.withDefaults()
	if err != nil {
		t.Fatal(err)
	}
	const P, F, C = results.StepPass, results.StepFail, results.StepClient
	ms := time.Millisecond
	retried := curveStep(3200, F, 25*ms)
	retried.Retried = true
	errs := curveStep(3200, F, 1*ms)
	errs.Failed = 1600
	errs.Load.Failed = 1600
	for _, c := range []struct {
		name   string
		before []results.CapacityStep
		step   results.CapacityStep
		want   string // in the reason; "" none
	}{
		{"rising", []results.CapacityStep{curveStep(1600, P, 2*ms), curveStep(6400, F, 900*ms), curveStep(3200, F, 25*ms)},
			curveStep(2263, F, 22*ms), ""},
		{"stall below a mild failure", []results.CapacityStep{curveStep(1600, P, 2*ms), curveStep(6400, F, 900*ms), curveStep(3200, F, 25*ms)},
			curveStep(2263, F, 400*ms), "p99 400.00ms here, 25.00ms at the higher rate 3,200/s"},
		{"twice but within a quarter of the bound", []results.CapacityStep{curveStep(3200, F, 3*ms)},
			curveStep(2263, F, 7*ms), ""},
		{"a retried step does not count", []results.CapacityStep{retried},
			curveStep(2263, F, 400*ms), ""},
		{"a step failing on errors is not compared", []results.CapacityStep{errs},
			curveStep(2263, F, 400*ms), ""},
		{"a client-limited step is not compared", []results.CapacityStep{curveStep(3200, C, 1*ms)},
			curveStep(2263, F, 400*ms), ""},
		{"too few requests to compare", []results.CapacityStep{curveStep(90, F, 25*ms)},
			curveStep(50, F, 400*ms), ""},
		{"passing step above a failing one", []results.CapacityStep{curveStep(3805, P, 10*ms), curveStep(4150, P, 12*ms), curveStep(3974, F, 30*ms)},
			curveStep(3489, F, 30*ms), "the step at 4,150/s, above this one, passed"},
		{"a pass within two precision steps is the knee's noise", []results.CapacityStep{curveStep(3805, P, 10*ms)},
			curveStep(3489, F, 30*ms), ""},
		{"a passing step is never contradicted", []results.CapacityStep{curveStep(3200, F, 25*ms)},
			curveStep(2263, P, 19*ms), ""},
	} {
		got := nonMonotonic(&c.step, c.before, o)
		if (c.want == "") != (got == "") || !strings.Contains(got, c.want) {
			t.Errorf("%s: %q, want %q", c.name, got, c.want)
		}
	}
}

// stallServer is knee(3000) failing mildly (p99 30 ms at p99<20ms)
// above its capacity, whose steps between 2000/s and 2900/s meet a
// 1-s stall of the machine stalls times.
func stallServer(stalls int) server {
	return func(rate float64) (time.Duration, time.Duration, float64, float64) {
		switch {
		case rate > 2000 && rate < 2900 && stalls > 0:
			stalls--
			return time.Second, 0, 0, 0.1
		case rate > 3000:
			return 30 * time.Millisecond, 0, 0, 0.1
		}
		return time.Millisecond, 0, 0, 0.1
	}
}

// A step whose p99 is markedly above that of a failure at a higher rate
// is measured again; the retry decides. (Without the check the stall at
// 2,263/s bounds the answer: 2,167/s.)
func TestSearchRetriesNonMonotonicStep(t *testing.T) {
	t.Parallel()
	res, _ := runFake(t, stallServer(1), Options{})
	retried := 0
	for _, s := range res.Steps {
		if s.Retried {
			retried++
			if len(s.Disturbed) != 1 || !strings.Contains(s.Disturbed[0], "non-monotonic: p99 1.00s here") {
				t.Errorf("retried step at %v: %q", s.Offered, s.Disturbed)
			}
		}
	}
	if retried != 1 || res.Rate < 2850 || res.Rate > 3000 || res.Untrusted() != "" || len(res.Disturbed) != 0 {
		t.Fatalf("retried %d, %s, disturbed %q", retried, results.CapacityLine(res), res.Disturbed)
	}
}

// A stall that lasts through the retries leaves the answer bounded by a
// contradicted step: not trusted, and said so.
func TestSearchNonMonotonicBound(t *testing.T) {
	t.Parallel()
	res, _ := runFake(t, stallServer(1000), Options{})
	if !res.BoundDisturbed || res.Untrusted() != "disturbed" || res.High < 2000 || res.High >= 2900 {
		t.Fatalf("%s: bound disturbed %v, untrusted %q", results.CapacityLine(res), res.BoundDisturbed, res.Untrusted())
	}
	if d := strings.Join(res.Disturbed, " "); !strings.Contains(d, "non-monotonic") {
		t.Errorf("disturbed %q", d)
	}
}

// A passing step whose p99 is markedly above a passing step's at a
// higher rate is said in a warning; the answer stands.
func TestSearchCurveWarning(t *testing.T) {
	t.Parallel()
	slowLow := func(rate float64) (time.Duration, time.Duration, float64, float64) {
		switch {
		case rate > 3000:
			return time.Second, 0, 0, 0.1
		case rate == 400:
			return 15 * time.Millisecond, 0, 0, 0.1
		}
		return time.Millisecond, 0, 0, 0.1
	}
	res, _ := runFake(t, slowLow, Options{})
	w := strings.Join(res.Warnings, " ")
	if res.Untrusted() != "" || !strings.Contains(w, "not monotonic: p99 15.01ms at 400/s, 1.00ms at the higher") {
		t.Fatalf("%s, warnings %q", results.CapacityLine(res), w)
	}
	res, _ = runFake(t, knee(3000), Options{})
	if w := strings.Join(res.Warnings, " "); strings.Contains(w, "monotonic") {
		t.Errorf("a monotonic curve warned: %q", w)
	}
}
