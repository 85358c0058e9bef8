package stats

import (
	"math"
	"slices"
)

// signedRankExactLimit is the most non-zero differences whose signed-rank
// distribution is counted exactly (O(n³) steps); above it the normal
// approximation is used.
const signedRankExactLimit = 200

// SignedRank returns the two-sided p-value of the Wilcoxon signed-rank
// test that paired differences ds (one per pair, e.g. the log of ours over
// theirs from one round where both ran back to back) are centred on zero.
// Pairing takes the machine's drift between rounds out of the comparison,
// which an unpaired test (MannWhitney) of the two sides' values keeps.
//
// Zero differences are dropped (Wilcoxon's convention); tied magnitudes
// share their mean rank. Up to 200 non-zero differences the p-value is
// exact: the statistic's distribution under the null (every sign equally
// likely) counted over all 2^n sign assignments, ties included. Fewer
// than 6 non-zero differences can never reach p ≤ 0.05 (two-sided: the
// smallest p is 2/2^n), and an empty or all-zero ds gives p = 1.
func SignedRank(ds []float64) float64 {
	var abs []float64
	for _, d := range ds {
		if d != 0 && !math.IsNaN(d) {
			abs = append(abs, math.Abs(d))
		}
	}
	n := len(abs)
	if n == 0 {
		return 1
	}
	// Doubled mid-ranks are integers: ranks i+1..j averaged, times two.
	order := make([]int, n)
	for i := range order {
		order[i] = i
	}
	slices.SortFunc(order, func(a, b int) int {
		switch {
		case abs[a] < abs[b]:
			return -1
		case abs[a] > abs[b]:
			return 1
		}
		return 0
	})
	rank2 := make([]int, n) // by position in ds's non-zero order
	var tieTerm float64
	for i := 0; i < n; {
		j := i
		for j < n && abs[order[j]] == abs[order[i]] {
			j++
		}
		for k := i; k < j; k++ {
			rank2[order[k]] = i + 1 + j // (i+1 + j) / 2, doubled
		}
		t := float64(j - i)
		tieTerm += t*t*t - t
		i = j
	}
	// W+ (doubled): the ranks of the positive differences.
	w2, k := 0, 0
	for _, d := range ds {
		if d == 0 || math.IsNaN(d) {
			continue
		}
		if d > 0 {
			w2 += rank2[k]
		}
		k++
	}
	total2 := 0
	for _, r := range rank2 {
		total2 += r
	}
	if 2*w2 == total2 {
		return 1 // exactly at the null's centre
	}
	if n > signedRankExactLimit {
		mean := float64(total2) / 2 // of W+ doubled: half of all ranks
		// Var(W+) = n(n+1)(2n+1)/24 − Σ(t³−t)/48; doubled, times 4.
		nf := float64(n)
		sd := 2 * math.Sqrt(nf*(nf+1)*(2*nf+1)/24-tieTerm/48)
		z := (math.Abs(float64(w2)-mean) - 1) / sd // continuity: one doubled unit
		if z < 0 {
			return 1
		}
		return math.Min(1, 2*normCDF(-z))
	}
	// dist[s]: probability that the positive ranks sum (doubled) to s.
	dist := make([]float64, total2+1)
	dist[0] = 1
	top := 0
	for _, r := range rank2 {
		for s := top; s >= 0; s-- {
			if dist[s] != 0 {
				dist[s+r] += dist[s] / 2
				dist[s] /= 2
			}
		}
		top += r
	}
	var lo, hi float64
	for s, p := range dist {
		if s <= w2 {
			lo += p
		}
		if s >= w2 {
			hi += p
		}
	}
	return math.Min(1, 2*math.Min(lo, hi))
}

// SignedRankCI is the Hodges-Lehmann estimate of the centre of paired
// differences ds (the median of their Walsh averages, (dᵢ + dⱼ)/2 for
// i ≤ j) with its distribution-free confidence interval from the
// signed-rank distribution (Tukey): the k-th smallest and k-th largest
// Walsh averages, each end at one-sided level alpha (so 0.025 gives a 95%
// interval). It is the paired counterpart of ShiftCI; on log ratios its
// exp is the ratio and the range it lies in. Lo and Hi are ±Inf when n
// differences cannot reach that level (2^-n > alpha).
func SignedRankCI(ds []float64, alpha float64) Shift {
	s := Shift{N1: len(ds), N2: len(ds), Est: math.NaN(), Lo: math.Inf(-1), Hi: math.Inf(1), Alpha: alpha}
	n := len(ds)
	if n == 0 {
		return s
	}
	walsh := make([]float64, 0, n*(n+1)/2)
	for i := range ds {
		for j := i; j < n; j++ {
			walsh = append(walsh, (ds[i]+ds[j])/2)
		}
	}
	slices.Sort(walsh)
	s.Est = median(walsh)
	if n > signedRankExactLimit {
		nf := float64(n)
		mean, sd := nf*(nf+1)/4, math.Sqrt(nf*(nf+1)*(2*nf+1)/24)
		if k := int(math.Floor(mean + normQuantile(alpha)*sd - 0.5)); k >= 1 {
			s.Lo, s.Hi = walsh[k-1], walsh[len(walsh)-k]
		}
		return s
	}
	// The untied null distribution of W+ over 0..n(n+1)/2.
	dist := make([]float64, n*(n+1)/2+1)
	dist[0] = 1
	top := 0
	for r := 1; r <= n; r++ {
		for w := top; w >= 0; w-- {
			dist[w+r] += dist[w] / 2
			dist[w] /= 2
		}
		top += r
	}
	// k: the largest with P(W+ ≤ k−1) ≤ alpha.
	k, cdf := 0, 0.0
	for w, p := range dist {
		if cdf+p > alpha*(1+1e-9) {
			break
		}
		cdf += p
		k = w + 1
	}
	if k >= 1 {
		s.Lo, s.Hi = walsh[k-1], walsh[len(walsh)-k]
	}
	return s
}
