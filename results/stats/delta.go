package stats

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
	if !d.Decidable() {
		d.Warnings = append(d.Warnings, fmt.Sprintf("%d+%d trials can never show a difference at α = %v (need >= %d each)",
			len(old), len(new), d.Alpha, MinUTestSamples(d.Alpha)))
	}
	return d
}

// Significant reports whether the difference is significant at Alpha.
func (d Delta) Significant() bool { return d.P <= d.Alpha }

// Decidable reports whether the samples are large enough that the test
// could have found a difference at all: the smallest p-value n1+n2 trials
// can give (fully separated samples) is 2/C(n1+n2, n1). Two trials each
// give at best p = 1/3, so "no significant difference" from them says
// nothing, and reports must say "cannot decide" rather than "~".
func (d Delta) Decidable() bool { return MinP(d.Old.N, d.New.N) <= d.Alpha }

// MinP is the smallest two-sided Mann-Whitney p-value that samples of n1
// and n2 values can reach; 1 when either is empty.
func MinP(n1, n2 int) float64 {
	if n1 == 0 || n2 == 0 {
		return 1
	}
	return math.Min(1, 2/binom(n1+n2, n1))
}

// Pct is the change of the median in percent, NaN when undefined.
func (d Delta) Pct() float64 {
	if d.Old.Center == 0 || math.IsNaN(d.Old.Center) || math.IsNaN(d.New.Center) {
		return math.NaN()
	}
	return (d.New.Center/d.Old.Center - 1) * 100
}

// PctRange is the change in percent between the ends of the two samples'
// spreads: the new low against the old high, and the new high against the
// old low (their intervals when both have one, else the observed ranges).
// It is what a reader needs beside an undecided difference: how large or
// small the change could be, given what was measured.
func (d Delta) PctRange() (lo, hi float64) {
	oLo, oHi := spread(d.Old)
	nLo, nHi := spread(d.New)
	if oLo == 0 || oHi == 0 {
		return math.NaN(), math.NaN()
	}
	return (nLo/oHi - 1) * 100, (nHi/oLo - 1) * 100
}

func spread(s Summary) (lo, hi float64) {
	if s.HasCI() {
		return s.Lo, s.Hi
	}
	return s.Min, s.Max
}

// FormatDelta prints the change of the median as benchstat does: "~" when
// enough trials found no significant difference, because a percentage
// below significance is noise that readers take for a result; "?" when
// too few trials were run for the test to decide at all.
func (d Delta) FormatDelta() string {
	switch {
	case !d.Significant() && !d.Decidable():
		return "?"
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

// MinUTestSamples is the smallest n for which two samples of n values can
// reach p ≤ alpha at all: fully separated samples give p = 2/C(2n, n).
func MinUTestSamples(alpha float64) int {
	for n := 1; n < 100; n++ {
		if MinP(n, n) <= alpha {
			return n
		}
	}
	return 100
}
