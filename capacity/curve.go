package capacity

import (
	"fmt"
	"time"

	"github.com/wirebench/wirebench/results"
)

// A server's latency does not fall as its load rises: a step whose p99 is
// markedly above that of a step at a higher rate, or that failed below a
// rate that passed, owes part of its figure to something else — a stall
// of the machine, a queue the step before left behind. These say what
// "markedly" is.
const (
	// curveFactor: a p99 more than this many times another's.
	curveFactor = 2
	// curveShare: and above it by more than this share of the SLO's
	// latency bound, so that the microseconds of a quiet server's low
	// rates (cold caches, idle CPUs) never count.
	curveShare = 0.25
	// curveRequests: a p99 resting on fewer requests is its slowest one
	// or two, and is not compared.
	curveRequests = 100
	// curvePrecisions: a pass more than this many precision steps above a
	// failure is beyond the flips of a server measured at its knee.
	curvePrecisions = 2
)

// counted reports whether a step counts in the search's curve: measured
// for the answer, not set aside to be measured again.
func counted(s *results.CapacityStep) bool { return !s.Retried && s.Load != nil }

// comparable reports whether s's p99 says something of the server's
// latency at its rate: enough requests, and errors within the SLO (a
// server failing fast, or the client's refused connections, lowers it).
func comparable(s *results.CapacityStep, slo []results.Threshold) bool {
	if s.Requests < curveRequests || s.P99 <= 0 {
		return false
	}
	for _, th := range slo {
		if th.Metric() == "errors" {
			if _, ok := th.Check(s.Load); !ok {
				return false
			}
		}
	}
	return true
}

// fallsMarkedly reports whether p99 lo, measured at a lower rate than hi,
// is markedly above it: the curve falls as the rate rises.
func fallsMarkedly(lo, hi, bound time.Duration) bool {
	return float64(lo) > curveFactor*float64(hi) && float64(lo-hi) > curveShare*float64(bound)
}

// nonMonotonic says why the curve contradicts st, a step of the search
// that failed ("" when it does not): a counted step more than two
// precision steps above it passed, or one above it failed with a p99
// markedly below st's. Such a step is disturbed: the search measures it
// again, and an answer still bounded by it is not trusted.
func nonMonotonic(st *results.CapacityStep, steps []results.CapacityStep, o Options) string {
	if st.Verdict != results.StepFail || st.NoSuccess() {
		return ""
	}
	bound := sloBound(o.SLO)
	if bound == 0 {
		bound = sizingLatency
	}
	for i := range steps {
		s := &steps[i]
		if !counted(s) || s.Offered <= st.Offered {
			continue
		}
		if s.Passed() && s.Offered > st.Offered*(1+curvePrecisions*o.Precision) {
			return fmt.Sprintf("non-monotonic: the step at %s, above this one, passed", results.FormatRate(s.Offered))
		}
	}
	if !comparable(st, o.SLO) {
		return ""
	}
	var worst *results.CapacityStep
	for i := range steps {
		s := &steps[i]
		if !counted(s) || s.Offered <= st.Offered || s.Verdict != results.StepFail || !comparable(s, o.SLO) {
			continue
		}
		if fallsMarkedly(st.P99, s.P99, bound) && (worst == nil || s.P99 < worst.P99) {
			worst = s
		}
	}
	if worst == nil {
		return ""
	}
	return fmt.Sprintf("non-monotonic: p99 %s here, %s at the higher rate %s (a stall, or a queue the step before left)",
		results.FormatDuration(st.P99), results.FormatDuration(worst.P99), results.FormatRate(worst.Offered))
}

// curveWarnings says where the latency of passing steps fell markedly as
// the rate rose: the lower step was disturbed, but it passed, so the
// answer stands.
func curveWarnings(c *results.Capacity, o Options) []string {
	bound := sloBound(o.SLO)
	if bound == 0 {
		bound = sizingLatency
	}
	var lo, hi *results.CapacityStep
	for i := range c.Steps {
		a := &c.Steps[i]
		if !counted(a) || !a.Passed() || !comparable(a, o.SLO) {
			continue
		}
		for j := range c.Steps {
			b := &c.Steps[j]
			if !counted(b) || !b.Passed() || b.Offered <= a.Offered || !comparable(b, o.SLO) || !fallsMarkedly(a.P99, b.P99, bound) {
				continue
			}
			if lo == nil || a.P99-b.P99 > lo.P99-hi.P99 {
				lo, hi = a, b
			}
		}
	}
	if lo == nil {
		return nil
	}
	return []string{fmt.Sprintf("the latency curve is not monotonic: p99 %s at %s, %s at the higher %s — the lower step was disturbed, but it passed, so the answer stands",
		results.FormatDuration(lo.P99), results.FormatRate(lo.Offered), results.FormatDuration(hi.P99), results.FormatRate(hi.Offered))}
}
