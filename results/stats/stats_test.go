package stats

import (
	"math"
	"strings"
	"testing"
)

func near(a, b, tol float64) bool { return math.Abs(a-b) <= tol*math.Max(1, math.Abs(b)) }

func seq(from, to float64) []float64 {
	var xs []float64
	for x := from; x <= to; x++ {
		xs = append(xs, x)
	}
	return xs
}

// Expected intervals are worked out by hand from Binomial(n, 1/2):
// coverage(k) = 1 - 2·P(B ≤ k-1), the largest k with coverage ≥ 0.95.
func TestSummarizeMedianCI(t *testing.T) {
	tests := []struct {
		name           string
		xs             []float64
		median, lo, hi float64
		conf           float64
		warn           bool
	}{
		// n=5: k=1 covers 1-2/32 = 0.9375 < 0.95, so no interval (benchstat: "need >= 6").
		{"n5 too few", []float64{5, 1, 4, 2, 3}, 3, math.Inf(-1), math.Inf(1), 0, true},
		// n=6: k=1 covers 1-2/64 = 0.96875.
		{"n6", []float64{6, 5, 4, 3, 2, 1}, 3.5, 1, 6, 0.96875, false},
		// n=10: P(B≤1) = 11/1024, k=2 covers 0.978515625; k=3 covers 1-2·56/1024 = 0.89.
		{"n10", seq(1, 10), 5.5, 2, 9, 0.978515625, false},
		// n=20: P(B≤5) = 21700/2^20, k=6 covers 0.958610534...; k=7 covers 0.8847.
		{"n20", seq(1, 20), 10.5, 6, 15, 1 - 2*21700.0/1048576, false},
		{"one", []float64{7}, 7, math.Inf(-1), math.Inf(1), 0, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := Summarize(tt.xs)
			if s.Center != tt.median || s.Lo != tt.lo || s.Hi != tt.hi || !near(s.Conf, tt.conf, 1e-12) {
				t.Errorf("got median %v [%v, %v] @%v, want %v [%v, %v] @%v", s.Center, s.Lo, s.Hi, s.Conf, tt.median, tt.lo, tt.hi, tt.conf)
			}
			if got := len(s.Warnings) > 0; got != tt.warn {
				t.Errorf("warnings %q, want some: %v", s.Warnings, tt.warn)
			}
			if tt.warn && !strings.Contains(strings.Join(s.Warnings, ";"), "need >= 6 samples") {
				t.Errorf("warning %q does not say how many samples are needed", s.Warnings)
			}
			if s.HasCI() == tt.warn {
				t.Errorf("HasCI = %v with warn = %v", s.HasCI(), tt.warn)
			}
		})
	}
}

func TestSummarizeEmpty(t *testing.T) {
	s := Summarize(nil)
	if !math.IsNaN(s.Center) || len(s.Warnings) == 0 {
		t.Errorf("empty sample: %+v", s)
	}
}

func TestHalfWidth(t *testing.T) {
	s := Summarize([]float64{90, 95, 100, 100, 105, 120})
	// median 100, [90, 120]: the larger side is 20 → 20%.
	if got := s.HalfWidth(); !near(got, 0.20, 1e-12) {
		t.Errorf("HalfWidth = %v, want 0.20", got)
	}
}

func TestMannWhitney(t *testing.T) {
	s1 := []float64{2, 1, 3, 5}
	s2 := []float64{12, 11, 13, 15}
	s3 := []float64{0, 4, 6, 7}
	// Large samples from go-moremath's tests, checked there against R's
	// wilcox.test (normal approximation; l3 shares 30 values with l1: ties).
	l1, l2 := make([]float64, 500), make([]float64, 600)
	for i := range l1 {
		l1[i] = float64(i * 2)
	}
	for i := range l2 {
		l2[i] = float64(i*2 - 41)
	}
	l3 := append([]float64{}, l2...)
	copy(l3[:30], l1[:30])

	tests := []struct {
		name   string
		xs, ys []float64
		p, tol float64
	}{
		// Fully separated 4+4: 2 of C(8,4) = 70 arrangements are as extreme.
		{"separated 4+4", s1, s2, 2.0 / 70, 1e-12},
		{"separated 4+4 reversed", s2, s1, 2.0 / 70, 1e-12},
		// U = 5; the U distribution for 4+4 (coefficients of the Gaussian
		// binomial [8 4]_q) is 1,1,2,3,5,5,... so P(U ≤ 5) = 17/70.
		{"interleaved 4+4", s1, s3, 2 * 17.0 / 70, 1e-12},
		// Fully separated 6+6: 2/C(12,6) = 2/924.
		{"separated 6+6", seq(1, 6), seq(11, 16), 2.0 / 924, 1e-12},
		{"identical", s1, s1, 1, 0},
		{"all equal", []float64{2, 2, 2}, []float64{2, 2}, 1, 0},
		{"empty", nil, s1, 1, 0},
		// Ties, by hand: ranks 1,3,3 | 3,5,6 → U1 = 1; one tie group of 3
		// (t = 24); σ² = 9/12·(7 − 24/30) = 4.65; z = (4.5−1−0.5)/√4.65
		// = 1.3912; p = 2·(1−Φ(1.3912)) ≈ 0.1642 (R: wilcox.test(exact=FALSE)).
		{"ties by hand", []float64{1, 2, 2}, []float64{2, 3, 4}, 0.1642, 1e-3},
		{"large no ties (R)", l1, l2, 0.0049335360814172224, 1e-9},
		{"large ties (R)", l1, l3, 0.0038703814239617884, 1e-9},
		{"large identical", l1, l1, 1, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := MannWhitney(tt.xs, tt.ys); !near(got, tt.p, tt.tol) {
				t.Errorf("p = %.12g, want %.12g", got, tt.p)
			}
		})
	}
}

// The exact distribution must sum to one and be symmetric; this checks
// uCDF over every u for a few sizes, including one above 2^53 arrangements.
func TestUCDFShape(t *testing.T) {
	checked := 0
	for _, n := range [][2]int{{1, 1}, {3, 5}, {6, 6}, {50, 50}} {
		n1, n2 := n[0], n[1]
		if got := uCDF(n1, n2, n1*n2); !near(got, 1, 1e-9) {
			t.Errorf("uCDF(%d,%d,max) = %v, want 1", n1, n2, got)
		}
		for u := 0; u < n1*n2; u += 1 + n1*n2/20 {
			lower := uCDF(n1, n2, u)
			upper := 1 - uCDF(n1, n2, n1*n2-u-1) // P(U ≥ n1n2−u) = P(U ≤ u)
			if !near(lower, upper, 1e-9) {
				t.Errorf("uCDF(%d,%d,%d) = %v, mirror %v", n1, n2, u, lower, upper)
			}
			checked++
		}
	}
	if checked < 20 {
		t.Fatalf("only %d points checked", checked)
	}
}

func TestCompareDelta(t *testing.T) {
	tests := []struct {
		name     string
		old, new []float64
		delta    string
		string   string
		warn     bool
	}{
		// Interleaved: no evidence of a change, so no percentage.
		// U = 15 of 36; P(U ≤ 15) = 323/924 by TestUCDFBruteForce's enumeration.
		{"noise", []float64{10, 12, 14, 16, 18, 20}, []float64{11, 13, 15, 17, 19, 21}, "~", "~ (p=0.699 n=6+6)", false},
		{"same", seq(1, 6), seq(1, 6), "~", "~ (p=1.000 n=6+6)", false},
		// Separated: p = 2/924; medians 3.5 → 13.5 is +285.71%.
		{"faster", seq(1, 6), seq(11, 16), "+285.71%", "+285.71% (p=0.002 n=6+6)", false},
		{"slower", seq(11, 16), seq(1, 6), "-74.07%", "-74.07% (p=0.002 n=6+6)", false},
		// Three trials each can never reach p ≤ 0.05 (best is 0.1).
		{"too few", []float64{1, 2, 3}, []float64{10, 11, 12}, "?", "? (p=0.100 n=3+3)", true},
		// Three against six can: 2/C(9,3) = 0.024.
		{"unequal", []float64{1, 2, 3}, seq(11, 16), "+575.00%", "+575.00% (p=0.024 n=3+6)", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := Compare(tt.old, tt.new)
			if got := d.FormatDelta(); got != tt.delta {
				t.Errorf("FormatDelta = %q, want %q", got, tt.delta)
			}
			if got := d.String(); got != tt.string {
				t.Errorf("String = %q, want %q", got, tt.string)
			}
			if got := len(d.Warnings) > 0; got != tt.warn {
				t.Errorf("warnings %q, want some: %v", d.Warnings, tt.warn)
			}
		})
	}
}

func TestMinUTestSamples(t *testing.T) {
	// benchmath's table: 2/C(8,4) = 0.0286 is the first below 0.05.
	if got := MinUTestSamples(0.05); got != 4 {
		t.Errorf("MinUTestSamples(0.05) = %d, want 4", got)
	}
	if got := MinCISamples(0.95); got != 6 {
		t.Errorf("MinCISamples(0.95) = %d, want 6", got)
	}
}

// TestUCDFBruteForce checks the exact distribution against enumerating
// every way of choosing which ranks belong to the first sample.
func TestUCDFBruteForce(t *testing.T) {
	checked := 0
	for _, n := range [][2]int{{2, 3}, {4, 4}, {3, 7}, {6, 6}} {
		n1, n2 := n[0], n[1]
		counts := make([]int, n1*n2+1)
		total := 0
		for mask := 0; mask < 1<<(n1+n2); mask++ {
			if popcount(mask) != n1 {
				continue
			}
			u := 0 // pairs (x, y) with x ranked above y
			for i := 0; i < n1+n2; i++ {
				if mask&(1<<i) == 0 {
					continue
				}
				for j := 0; j < i; j++ {
					if mask&(1<<j) == 0 {
						u++
					}
				}
			}
			counts[u]++
			total++
		}
		cum := 0
		for u := range counts {
			cum += counts[u]
			if got, want := uCDF(n1, n2, u), float64(cum)/float64(total); !near(got, want, 1e-12) {
				t.Errorf("uCDF(%d,%d,%d) = %v, enumeration %v", n1, n2, u, got, want)
			}
			checked++
		}
	}
	if checked != 7+17+22+37 {
		t.Fatalf("checked %d points", checked)
	}
}

func popcount(x int) int {
	n := 0
	for ; x != 0; x &= x - 1 {
		n++
	}
	return n
}

func TestMinP(t *testing.T) {
	tests := []struct {
		n1, n2 int
		want   float64
	}{
		{0, 5, 1}, {1, 1, 1}, {2, 2, 1.0 / 3}, {3, 3, 0.1}, {4, 4, 2.0 / 70}, {3, 6, 2.0 / 84}, {2, 10, 2.0 / 66},
	}
	for _, tt := range tests {
		if got := MinP(tt.n1, tt.n2); !near(got, tt.want, 1e-12) {
			t.Errorf("MinP(%d, %d) = %v, want %v", tt.n1, tt.n2, got, tt.want)
		}
		// The bound is reached: fully separated samples give exactly MinP.
		if tt.n1 > 0 && tt.n2 > 0 {
			if p := MannWhitney(seq(1, float64(tt.n1)), seq(100, float64(99+tt.n2))); !near(p, tt.want, 1e-9) {
				t.Errorf("MannWhitney of separated %d+%d = %v, want MinP %v", tt.n1, tt.n2, p, tt.want)
			}
		}
	}
}
