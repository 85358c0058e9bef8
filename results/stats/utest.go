package stats

import (
	"math"
	"slices"
)

// Exact U distributions are used up to this sample size (without ties), as
// go-moremath does; above it the normal approximation is within 1e-3.
const uExactLimit = 50

// MannWhitney returns the two-sided p-value of the Mann-Whitney U test
// (Wilcoxon rank-sum) that xs and ys come from distributions with the same
// location. It assumes neither normality nor equal variance, which suits
// benchmark trials, and it is what benchstat uses.
//
// Without ties and with both samples of at most 50 values the p-value is
// exact (the U distribution counted over all arrangements); otherwise it
// is the normal approximation with tie and continuity corrections (as R's
// wilcox.test with exact=FALSE). benchstat also counts an exact
// distribution with ties for n ≤ 25; we do not, so with ties our p-values
// differ slightly from benchstat's.
//
// Identical samples (every value the same) give p = 1: there is no
// evidence of a difference. An empty sample gives p = 1 as well.
func MannWhitney(xs, ys []float64) float64 {
	n1, n2 := len(xs), len(ys)
	if n1 == 0 || n2 == 0 {
		return 1
	}
	u1, ties := rankSumU(xs, ys)
	u2 := float64(n1*n2) - u1
	if u1 == u2 {
		return 1
	}
	if len(ties) == 0 && n1 <= uExactLimit && n2 <= uExactLimit {
		p := 2 * uCDF(n1, n2, int(math.Min(u1, u2)))
		return math.Min(p, 1)
	}
	return uNormalP(n1, n2, u1, ties)
}

// rankSumU is U for xs: the number of pairs (x, y) with x > y, ties
// counting one half. ties lists the size of every group of equal values.
func rankSumU(xs, ys []float64) (u float64, ties []int) {
	type obs struct {
		v     float64
		first bool
	}
	all := make([]obs, 0, len(xs)+len(ys))
	for _, x := range xs {
		all = append(all, obs{x, true})
	}
	for _, y := range ys {
		all = append(all, obs{y, false})
	}
	slices.SortFunc(all, func(a, b obs) int {
		switch {
		case a.v < b.v:
			return -1
		case a.v > b.v:
			return 1
		}
		return 0
	})
	var r1 float64 // rank sum of xs, ties get their average rank
	for i := 0; i < len(all); {
		j, nx := i, 0
		for ; j < len(all) && all[j].v == all[i].v; j++ {
			if all[j].first {
				nx++
			}
		}
		avg := float64(i+1+j) / 2 // mean of ranks i+1..j
		r1 += avg * float64(nx)
		if j-i > 1 {
			ties = append(ties, j-i)
		}
		i = j
	}
	n1 := float64(len(xs))
	return r1 - n1*(n1+1)/2, ties
}

// uCDF is P(U ≤ u) under the null hypothesis for sample sizes n1, n2 and
// no ties. It counts arrangements with the recurrence on the largest
// value: it belongs to the first sample (and beats all n2 of the second)
// or to the second,
//
//	c(i, j, u) = c(i-1, j, u-j) + c(i, j-1, u),
//
// over u ≤ the asked value only. Counts are float64: all terms are
// positive, so the relative error stays near machine precision even where
// the counts exceed 2^53 (C(100, 50) ≈ 1e29).
func uCDF(n1, n2, u int) float64 {
	if u < 0 {
		return 0
	}
	return uCDFs(n1, n2, u)[u]
}

// uCDFs is P(U ≤ v) for every v from 0 to u (u ≥ 0), from one count.
func uCDFs(n1, n2, u int) []float64 {
	// prev[j][v] = c(i-1, j, v); cur[j][v] = c(i, j, v).
	row := func() [][]float64 {
		r := make([][]float64, n2+1)
		for j := range r {
			r[j] = make([]float64, u+1)
		}
		return r
	}
	prev, cur := row(), row()
	for j := 0; j <= n2; j++ {
		prev[j][0] = 1 // c(0, j, 0) = 1
	}
	for i := 1; i <= n1; i++ {
		for v := 0; v <= u; v++ {
			cur[0][v] = 0
		}
		cur[0][0] = 1 // c(i, 0, 0) = 1
		for j := 1; j <= n2; j++ {
			for v := 0; v <= u; v++ {
				c := cur[j-1][v]
				if v >= j {
					c += prev[j][v-j]
				}
				cur[j][v] = c
			}
		}
		prev, cur = cur, prev
	}
	out := make([]float64, u+1)
	var count float64
	total := binom(n1+n2, n1)
	for v, c := range prev[n2] {
		count += c
		out[v] = count / total
	}
	return out
}

// binom is the binomial coefficient C(n, k) as a float64.
func binom(n, k int) float64 {
	lg := func(x int) float64 { v, _ := math.Lgamma(float64(x) + 1); return v }
	return math.Round(math.Exp(lg(n) - lg(k) - lg(n-k)))
}

// uNormalP is the two-sided p-value of U from the normal approximation,
// with the variance corrected for ties and a continuity correction of 1/2.
func uNormalP(n1, n2 int, u1 float64, ties []int) float64 {
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
	d := u1 - mu
	d -= math.Copysign(0.5, d)
	z := math.Abs(d) / sigma
	return math.Min(1, math.Erfc(z/math.Sqrt2))
}
