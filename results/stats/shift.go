package stats

import (
	"math"
	"slices"
)

// Shift is the Hodges-Lehmann estimate of how far ys lie above xs, with a
// distribution-free confidence interval (Moses, from the Mann-Whitney U
// distribution): the estimate is the median of every difference y − x,
// the interval the k-th smallest and k-th largest of them. On log values
// it is the log of the ratio change/base, which is how the gate reads it.
//
// It assumes only that the two samples differ by a shift (the same shape
// of noise on both sides), which is what an A/B of two builds on one
// machine, interleaved, is built to make true.
type Shift struct {
	N1, N2 int
	Est    float64 // median of the pairwise differences
	// Lo and Hi bound the shift, each end with one-sided level Alpha
	// (so [Lo, Hi] covers with probability at least 1 − 2·Alpha). They are
	// ±Inf when n1+n2 trials cannot reach that level at all.
	Lo, Hi float64
	Alpha  float64
}

// HasCI reports whether both ends are finite.
func (s Shift) HasCI() bool { return !math.IsInf(s.Lo, 0) && !math.IsInf(s.Hi, 0) }

// ShiftCI estimates the shift of ys over xs, the interval's ends each at
// one-sided level alpha (0 < alpha < 0.5).
func ShiftCI(xs, ys []float64, alpha float64) Shift {
	s := Shift{N1: len(xs), N2: len(ys), Est: math.NaN(), Lo: math.Inf(-1), Hi: math.Inf(1), Alpha: alpha}
	if len(xs) == 0 || len(ys) == 0 {
		return s
	}
	d := make([]float64, 0, len(xs)*len(ys))
	for _, y := range ys {
		for _, x := range xs {
			d = append(d, y-x)
		}
	}
	slices.Sort(d)
	s.Est = median(d)
	// P(U ≤ k−1) ≤ alpha: under no shift, fewer than k differences below
	// the true shift happen with probability at most alpha, so the k-th
	// smallest difference is a lower bound at that level (and, by symmetry,
	// the k-th largest an upper one).
	if k := uCritical(len(xs), len(ys), alpha) + 1; k >= 1 {
		s.Lo, s.Hi = d[k-1], d[len(d)-k]
	}
	return s
}

// ShiftAbove is the one-sided p-value of "ys exceed xs by at most b"
// against "by more than b": the Mann-Whitney test of xs against ys − b,
// small when most differences y − x lie above b. It agrees with ShiftCI:
// without ties, ShiftAbove(xs, ys, b) ≤ alpha exactly when the interval's
// Lo > b.
func ShiftAbove(xs, ys []float64, b float64) float64 {
	n1, n2 := len(xs), len(ys)
	if n1 == 0 || n2 == 0 {
		return 1
	}
	u, ties := rankSumU(xs, shifted(ys, -b)) // pairs with y − b < x: few when ys lie above
	return uLowerP(n1, n2, u, ties)
}

// ShiftBelow is the one-sided p-value of "ys exceed xs by at least b"
// against "by less than b"; ShiftBelow(xs, ys, b) ≤ alpha exactly when
// the interval's Hi < b (without ties).
func ShiftBelow(xs, ys []float64, b float64) float64 {
	n1, n2 := len(xs), len(ys)
	if n1 == 0 || n2 == 0 {
		return 1
	}
	u, ties := rankSumU(xs, shifted(ys, -b))
	return uLowerP(n1, n2, float64(n1*n2)-u, ties)
}

func shifted(xs []float64, by float64) []float64 {
	out := make([]float64, len(xs))
	for i, x := range xs {
		out[i] = x + by
	}
	return out
}

// uLowerP is P(U ≤ u) under no difference: exact without ties for samples
// of at most uExactLimit values, else the normal approximation with tie
// and continuity corrections (as MannWhitney).
func uLowerP(n1, n2 int, u float64, ties []int) float64 {
	if len(ties) == 0 && n1 <= uExactLimit && n2 <= uExactLimit {
		return math.Min(1, uCDF(n1, n2, int(math.Floor(u))))
	}
	var t float64
	for _, g := range ties {
		t += float64(g*g*g - g)
	}
	n := float64(n1 + n2)
	mu := float64(n1*n2) / 2
	sigma := math.Sqrt(float64(n1*n2) / 12 * ((n + 1) - t/(n*(n-1))))
	if sigma == 0 {
		return 1
	}
	return normCDF((u + 0.5 - mu) / sigma)
}

// uCritical is the largest c with P(U ≤ c) ≤ alpha under no difference
// (no ties): a one-sided test at level alpha rejects when U ≤ c. It is −1
// when even U = 0 is too likely: n1+n2 trials cannot reach alpha.
func uCritical(n1, n2 int, alpha float64) int {
	if n1 == 0 || n2 == 0 {
		return -1
	}
	if n1 <= uExactLimit && n2 <= uExactLimit {
		cdf := uCDFs(n1, n2, n1*n2/2)
		c := -1
		for v, p := range cdf {
			if p > alpha {
				break
			}
			c = v
		}
		return c
	}
	mu := float64(n1*n2) / 2
	sigma := math.Sqrt(float64(n1*n2) * float64(n1+n2+1) / 12)
	// Φ((c + 0.5 − mu)/σ) ≤ alpha
	return int(math.Floor(mu + sigma*normQuantile(alpha) - 0.5))
}

// MinShiftSamples is the fewest trials per side with which a one-sided
// test at level alpha can reject at all: fully separated samples give
// P(U = 0) = 1/C(2n, n).
func MinShiftSamples(alpha float64) int {
	for n := 1; n < 100; n++ {
		if uCritical(n, n, alpha) >= 0 {
			return n
		}
	}
	return 100
}

// Holm adjusts p-values for multiple comparisons (Holm's step-down): a
// hypothesis is rejected at level alpha when its adjusted p-value is at
// most alpha, and the chance of rejecting any true one stays at most
// alpha, with more power than Bonferroni.
func Holm(ps []float64) []float64 {
	m := len(ps)
	idx := make([]int, m)
	for i := range idx {
		idx[i] = i
	}
	slices.SortStableFunc(idx, func(a, b int) int {
		switch {
		case ps[a] < ps[b]:
			return -1
		case ps[a] > ps[b]:
			return 1
		}
		return 0
	})
	out := make([]float64, m)
	running := 0.0
	for rank, i := range idx {
		running = math.Max(running, math.Min(1, float64(m-rank)*ps[i]))
		out[i] = running
	}
	return out
}

func normCDF(z float64) float64 { return 0.5 * math.Erfc(-z/math.Sqrt2) }

// normQuantile is Φ⁻¹(p) for 0 < p < 1.
func normQuantile(p float64) float64 { return -math.Sqrt2 * math.Erfcinv(2*p) }
