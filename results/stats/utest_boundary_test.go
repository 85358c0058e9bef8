package stats

import (
	"math"
	"math/big"
	"testing"
)

// span is lo, lo+1, ..., lo+n-1.
func span(lo, n int) []float64 {
	s := make([]float64, n)
	for i := range s {
		s[i] = float64(lo + i)
	}
	return s
}

// TestMannWhitneyExactNormalBoundary pins where the exact distribution
// gives way to the normal approximation: up to 50 values per sample and no
// ties. Completely separated samples make the two far apart (about 2e-29
// against 1e-17 at 50+50), so the method used is visible in the p-value.
// The expected values are computed here independently: the exact one as
// 2 / C(n1+n2, n1) with big integers, the normal one from its formula.
func TestMannWhitneyExactNormalBoundary(t *testing.T) {
	exact := func(n1, n2 int) float64 {
		c := new(big.Int).Binomial(int64(n1+n2), int64(n1))
		p, _ := new(big.Float).Quo(big.NewFloat(2), new(big.Float).SetInt(c)).Float64()
		return p
	}
	normal := func(n1, n2 int) float64 { // U = 0, no ties, continuity 1/2
		mu := float64(n1*n2) / 2
		sigma := math.Sqrt(float64(n1*n2) * float64(n1+n2+1) / 12)
		return math.Erfc((mu - 0.5) / sigma / math.Sqrt2)
	}
	for _, tc := range []struct {
		n1, n2 int
		want   float64
	}{
		{50, 50, 1.9823306042836678e-29}, // 2 / C(100, 50), exact
		{50, 10, 2 / 75394027566.0},      // 2 / C(60, 10), exact
		{51, 50, 0},                      // normal
		{50, 51, 0},                      // normal
		{51, 51, 0},                      // normal
	} {
		want := tc.want
		if want == 0 {
			want = normal(tc.n1, tc.n2)
		} else if e := exact(tc.n1, tc.n2); math.Abs(e-want)/want > 1e-12 {
			t.Fatalf("the literal for %d+%d is wrong: %g vs %g", tc.n1, tc.n2, want, e)
		}
		got := MannWhitney(span(0, tc.n1), span(1000, tc.n2))
		if math.Abs(got-want)/want > 1e-6 {
			t.Errorf("%d+%d separated: p = %g, want %g", tc.n1, tc.n2, got, want)
		}
		// symmetric in the samples' order
		if back := MannWhitney(span(1000, tc.n2), span(0, tc.n1)); math.Abs(back-got)/got > 1e-9 {
			t.Errorf("%d+%d: p = %g one way, %g the other", tc.n1, tc.n2, got, back)
		}
	}
	// A tie sends even small samples to the normal approximation, with the
	// tie correction: 1..5 against 5..9 share one 5.
	xs, ys := span(1, 5), span(5, 5)
	sigma := math.Sqrt(25.0 / 12 * (11 - 6.0/90)) // one tie group of 2: t³-t = 6
	want := math.Erfc((12.5 - 0.5 - 0.5) / sigma / math.Sqrt2)
	if got := MannWhitney(xs, ys); math.Abs(got-want)/want > 1e-9 {
		t.Errorf("with a tie: p = %g, want %g (normal, tie-corrected)", got, want)
	}
	// Without it, the exact 2 / C(10, 5).
	if got := MannWhitney(span(1, 5), span(6, 5)); math.Abs(got-2.0/252) > 1e-12 {
		t.Errorf("1..5 vs 6..10: p = %g, want 2/252", got)
	}
}
