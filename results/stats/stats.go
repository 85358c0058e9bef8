package stats

import (
	"fmt"
	"math"
	"slices"
)

// Confidence is the level of every confidence interval in our reports, and
// Alpha the significance level of every comparison: benchstat's defaults.
const (
	Confidence = 0.95
	Alpha      = 0.05
)

// Summary is the center and spread of one metric over a cell's trials.
//
// We assume nothing about the distribution (trials of a server are often
// bimodal: GC, a noisy neighbour), so the center is the median and the
// interval comes from order statistics, as benchstat's AssumeNothing does.
type Summary struct {
	N      int
	Center float64 // median
	// Lo and Hi bound the median with probability Conf. They are -Inf and
	// +Inf when there are too few samples for an interval at Confidence.
	Lo, Hi   float64
	Conf     float64 // actual coverage of [Lo, Hi] (≥ Confidence)
	Min, Max float64
	// Warnings are statistical caveats that travel with the numbers.
	Warnings []string
}

// HasCI reports whether the interval is finite.
func (s Summary) HasCI() bool { return !math.IsInf(s.Lo, 0) && !math.IsInf(s.Hi, 0) }

// HalfWidth is the larger distance from the center to an end of the
// interval, as a fraction of the center: benchstat's "± x%". It is +Inf
// without an interval and 0 for a zero center.
func (s Summary) HalfWidth() float64 {
	if !s.HasCI() {
		return math.Inf(1)
	}
	if s.Center == 0 {
		return 0
	}
	return math.Max(s.Hi-s.Center, s.Center-s.Lo) / math.Abs(s.Center)
}

// Summarize returns the median of xs and a distribution-free confidence
// interval for it at level Confidence.
func Summarize(xs []float64) Summary {
	s := Summary{N: len(xs), Lo: math.Inf(-1), Hi: math.Inf(1), Center: math.NaN()}
	if len(xs) == 0 {
		s.Warnings = []string{"no samples"}
		return s
	}
	sorted := slices.Clone(xs)
	slices.Sort(sorted)
	s.Min, s.Max = sorted[0], sorted[len(sorted)-1]
	s.Center = median(sorted)
	if k, conf, ok := medianCIOrder(len(sorted), Confidence); ok {
		s.Lo, s.Hi, s.Conf = sorted[k-1], sorted[len(sorted)-k], conf
	} else {
		s.Warnings = append(s.Warnings, fmt.Sprintf("need >= %d samples for a confidence interval at level %v", MinCISamples(Confidence), Confidence))
	}
	return s
}

// median of sorted xs (the mean of the middle two for even length).
func median(sorted []float64) float64 {
	n := len(sorted)
	if n%2 == 1 {
		return sorted[n/2]
	}
	return (sorted[n/2-1] + sorted[n/2]) / 2
}

// medianCIOrder finds the symmetric interval [x(k), x(n+1-k)] around the
// median with the largest k whose coverage is at least conf.
//
// The number B of samples below the true median is Binomial(n, 1/2), so
// the interval misses the median only when B < k or B > n-k:
//
//	coverage(k) = 1 - 2·P(B ≤ k-1)
//
// This is the textbook order-statistic interval. benchstat (via
// go-moremath's QuantileCI) grows an interval out from the center, which
// for the median is the same interval; above n = 30 it switches to a
// normal approximation, where we stay exact.
func medianCIOrder(n int, conf float64) (k int, coverage float64, ok bool) {
	cdf := 0.0 // P(B ≤ k-1)
	for i := 1; i <= n/2; i++ {
		cdf += binomPMF(n, i-1)
		c := 1 - 2*cdf
		if c < conf {
			break
		}
		k, coverage, ok = i, c, true
	}
	return k, coverage, ok
}

// MinCISamples is the smallest n with an interval at conf (6 at 95%).
func MinCISamples(conf float64) int {
	for n := 1; n < 1000; n++ {
		if _, _, ok := medianCIOrder(n, conf); ok {
			return n
		}
	}
	return 1000
}

// binomPMF is P(B = k) for B ~ Binomial(n, 1/2), computed in log space so
// it stays finite for large n.
func binomPMF(n, k int) float64 {
	lg := func(x int) float64 { v, _ := math.Lgamma(float64(x) + 1); return v }
	return math.Exp(lg(n) - lg(k) - lg(n-k) - float64(n)*math.Ln2)
}
