package report

import (
	"fmt"
	"math"
)

// Delta compares one metric between an old and a new set of trials.
type Delta struct {
	Old, New Summary
	P        float64 // two-sided Mann-Whitney p-value
	Alpha    float64
	// Warnings say why a difference might go undetected (too few trials).
	Warnings []string
}

// Compare tests whether the trials in old and new differ in location.
func Compare(old, new []float64) Delta {
	d := Delta{Old: Summarize(old), New: Summarize(new), P: MannWhitney(old, new), Alpha: Alpha}
	if d.P > d.Alpha {
		if need := minUTestSamples(d.Alpha); len(old) < need && len(new) < need {
			d.Warnings = append(d.Warnings, fmt.Sprintf("need >= %d trials to detect a difference at alpha level %v", need, d.Alpha))
		}
	}
	return d
}

// Significant reports whether the difference is significant at Alpha.
func (d Delta) Significant() bool { return d.P <= d.Alpha }

// Pct is the change of the median in percent, NaN when undefined.
func (d Delta) Pct() float64 {
	if d.Old.Center == 0 || math.IsNaN(d.Old.Center) || math.IsNaN(d.New.Center) {
		return math.NaN()
	}
	return (d.New.Center/d.Old.Center - 1) * 100
}

// FormatDelta prints the change of the median as benchstat does: "~" when
// the difference is not significant, because a percentage below
// significance is noise that readers take for a result.
func (d Delta) FormatDelta() string {
	switch {
	case !d.Significant():
		return "~"
	case d.Old.Center == d.New.Center:
		return "0.00%"
	case math.IsNaN(d.Pct()):
		return "?"
	}
	return fmt.Sprintf("%+.2f%%", d.Pct())
}

// String is FormatDelta with the evidence: "+12.30% (p=0.008 n=6+6)" or
// "~ (p=0.420 n=6+6)".
func (d Delta) String() string {
	return fmt.Sprintf("%s (p=%.3f n=%d+%d)", d.FormatDelta(), d.P, d.Old.N, d.New.N)
}

// minUTestSamples is the smallest n for which two samples of n values can
// reach p ≤ alpha at all: fully separated samples give p = 2/C(2n, n).
func minUTestSamples(alpha float64) int {
	for n := 1; n < 100; n++ {
		if 2/binom(2*n, n) <= alpha {
			return n
		}
	}
	return 100
}
