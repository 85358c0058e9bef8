package stats

import (
	"strings"
	"testing"
)

// TestSignificanceBoundaries pins the comparisons' edges with literal
// values: p equal to alpha is significant (benchstat prints "~" only above
// it); 4 trials per side is the fewest that can reach p ≤ 0.05 (2/C(8, 4)
// = 2/70), and a pair of samples that can never reach it (3+4: the least
// p is 2/C(7, 3) = 2/35) warns; the median's 95% interval needs 6 trials, with coverage
// 1 - 2/64 from the extreme order statistics.
func TestSignificanceBoundaries(t *testing.T) {
	if !(Delta{P: 0.05, Alpha: 0.05}).Significant() || (Delta{P: 0.0500001, Alpha: 0.05}).Significant() {
		t.Error("p = alpha must be significant, p > alpha not")
	}
	if n := MinUTestSamples(0.05); n != 4 {
		t.Errorf("MinUTestSamples(0.05) = %d, want 4", n)
	}
	if d := (Delta{Old: Summary{N: 4}, New: Summary{N: 4}, Alpha: 2.0 / 70}); !d.Decidable() {
		t.Error("4+4 trials at alpha = 2/70 can reach p = alpha: decidable")
	}
	if n := MinUTestSamples(2.0 / 70); n != 4 {
		t.Errorf("MinUTestSamples(2/70) = %d, want 4 (p can equal alpha)", n)
	}
	overlap := func(n int) []float64 { // interleaved values: p far above alpha
		s := make([]float64, n)
		for i := range s {
			s[i] = float64(i)
		}
		return s
	}
	for _, tc := range []struct {
		old, new int
		warn     bool
	}{{3, 3, true}, {3, 4, true}, {4, 3, true}, {4, 4, false}, {2, 3, true}, {4, 5, false}} {
		d := Compare(overlap(tc.old), overlap(tc.new))
		warned := len(d.Warnings) == 1 && strings.Contains(d.Warnings[0], "need >= 4 each")
		if d.Significant() || warned != tc.warn || (!tc.warn && len(d.Warnings) != 0) {
			t.Errorf("%d vs %d trials: p=%v warnings %q, want warning %v", tc.old, tc.new, d.P, d.Warnings, tc.warn)
		}
	}
	for _, tc := range []struct {
		n        int
		conf     float64
		k        int
		coverage float64
		ok       bool
	}{
		{6, 0.95, 1, 1 - 2.0/64, true},
		{5, 0.95, 0, 0, false},
		{2, 0.5, 1, 0.5, true}, // coverage exactly the confidence asked
		{2, 0.51, 0, 0, false},
		{20, 0.95, 6, 0, true},
	} {
		k, c, ok := medianCIOrder(tc.n, tc.conf)
		if k != tc.k || ok != tc.ok || (tc.coverage != 0 && c != tc.coverage) || (ok && c < tc.conf) {
			t.Errorf("medianCIOrder(%d, %v) = %d, %v, %v; want %d, %v, %v", tc.n, tc.conf, k, c, ok, tc.k, tc.coverage, tc.ok)
		}
	}
	if n := MinCISamples(0.95); n != 6 {
		t.Errorf("MinCISamples(0.95) = %d, want 6", n)
	}
}
