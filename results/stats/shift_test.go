package stats

import (
	"math"
	"math/rand/v2"
	"testing"
)

// 6+6 separated by 10: the differences y − x are 10 + (j − i), the value
// 10+k occurring 6−|k| times. P(U ≤ 5) = 19/924 = 0.0206 ≤ 0.025 <
// P(U ≤ 6) = 30/924 (partitions in a 6×6 box: 1,1,2,3,5,7,11), so the
// 95% interval runs from the 6th smallest difference (7) to the 6th
// largest (13): the textbook critical value U = 5 for 6+6.
func TestShiftCIByHand(t *testing.T) {
	s := ShiftCI(seq(1, 6), seq(11, 16), 0.025)
	if s.Est != 10 || s.Lo != 7 || s.Hi != 13 || !s.HasCI() {
		t.Errorf("ShiftCI = %+v, want 10 [7, 13]", s)
	}
	if c := uCritical(6, 6, 0.025); c != 5 {
		t.Errorf("uCritical(6, 6, 0.025) = %d, want 5", c)
	}
	if c := uCritical(4, 4, 0.05); c != 1 { // P(U ≤ 1) = 2/70, P(U ≤ 2) = 4/70
		t.Errorf("uCritical(4, 4, 0.05) = %d, want 1", c)
	}
	// 3+3 cannot reach 0.025 (P(U = 0) = 1/20): no interval.
	if s := ShiftCI(seq(1, 3), seq(11, 13), 0.025); s.HasCI() || s.Est != 10 {
		t.Errorf("3+3 at 0.025: %+v, want an estimate and no interval", s)
	}
	if n := MinShiftSamples(0.025); n != 4 { // 1/C(8,4) = 1/70
		t.Errorf("MinShiftSamples(0.025) = %d, want 4", n)
	}
	if s := ShiftCI(nil, seq(1, 3), 0.05); !math.IsNaN(s.Est) || s.HasCI() {
		t.Errorf("empty side: %+v", s)
	}
}

// The one-sided p-values and the interval are the same test read two
// ways: p ≤ alpha exactly when the interval's end is beyond b. Checked on
// random samples, small (exact) and large (normal approximation).
func TestShiftPValuesAgreeWithCI(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	checked := 0
	for _, n := range [][2]int{{4, 4}, {5, 7}, {6, 6}, {10, 12}, {60, 55}} {
		for range 20 {
			xs, ys := make([]float64, n[0]), make([]float64, n[1])
			for i := range xs {
				xs[i] = rng.NormFloat64()
			}
			shift := rng.Float64()*2 - 1
			for i := range ys {
				ys[i] = rng.NormFloat64() + shift
			}
			const alpha = 0.05
			s := ShiftCI(xs, ys, alpha)
			for _, b := range []float64{-1.5, -0.5, -0.1, 0, 0.1, 0.5, 1.5, s.Lo + 1e-9, s.Lo - 1e-9, s.Hi + 1e-9, s.Hi - 1e-9} {
				if math.IsInf(b, 0) {
					continue
				}
				if up := ShiftAbove(xs, ys, b) <= alpha; up != (s.Lo > b) {
					t.Fatalf("%v: b=%v: ShiftAbove p ≤ α is %v, Lo=%v", n, b, up, s.Lo)
				}
				if down := ShiftBelow(xs, ys, b) <= alpha; down != (s.Hi < b) {
					t.Fatalf("%v: b=%v: ShiftBelow p ≤ α is %v, Hi=%v", n, b, down, s.Hi)
				}
				checked++
			}
		}
	}
	if checked < 400 {
		t.Fatalf("only %d comparisons checked", checked)
	}
}

// The interval covers the true shift at its stated level: 2000 runs of
// 6+6 normal trials with a known shift, each end at 0.05 one-sided.
func TestShiftCICoverage(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 7))
	const runs, alpha, shift = 2000, 0.05, 0.3
	missLo, missHi := 0, 0
	for range runs {
		xs, ys := make([]float64, 6), make([]float64, 6)
		for i := range xs {
			xs[i] = rng.NormFloat64()
			ys[i] = rng.NormFloat64() + shift
		}
		s := ShiftCI(xs, ys, alpha)
		if s.Lo > shift {
			missLo++
		}
		if s.Hi < shift {
			missHi++
		}
	}
	// Each end misses with probability P(U ≤ c): at 0.05 for 6+6, c = 7
	// and P(U ≤ 7) = 43/924 = 0.0465; allow 4 binomial standard errors.
	limit := runs * (0.0465 + 4*math.Sqrt(0.0465*0.9535/runs))
	if float64(missLo) > limit || float64(missHi) > limit || missLo == 0 || missHi == 0 {
		t.Errorf("misses: below %d, above %d of %d; want each ≤ %.0f (and some)", missLo, missHi, runs, limit)
	}
}

func TestHolm(t *testing.T) {
	// Sorted 0.005 (×4), 0.01 (×3), 0.03 (×2), 0.04 (×1, raised to the
	// running maximum 0.06).
	got := Holm([]float64{0.01, 0.04, 0.03, 0.005})
	want := []float64{0.03, 0.06, 0.06, 0.02}
	for i := range want {
		if !near(got[i], want[i], 1e-12) {
			t.Errorf("Holm = %v, want %v", got, want)
			break
		}
	}
	if got := Holm([]float64{0.6, 0.9}); got[0] != 1 || got[1] != 1 {
		t.Errorf("Holm caps at 1: %v", got)
	}
	if got := Holm(nil); len(got) != 0 {
		t.Errorf("Holm(nil) = %v", got)
	}
}

// MDE against theory where it is known, and against an independent
// simulation where it is not.
func TestMDE(t *testing.T) {
	// Large samples: the t-test's (z₁₋α + z_power)·√(2/n), inflated by
	// √(π/3) for the rank test's efficiency on normal data (3/π).
	want := (1.6448536 + 0.8416212) * math.Sqrt(2.0/50) * math.Sqrt(math.Pi/3)
	if got := MDE(50, 50, 0.05, 0.8); !near(got, want, 0.03) {
		t.Errorf("MDE(50, 50) = %v, want about %v", got, want)
	}
	if got := MDE(3, 3, 0.025, 0.8); !math.IsInf(got, 1) {
		t.Errorf("MDE(3, 3, 0.025) = %v, want +Inf (P(U = 0) = 1/20)", got)
	}
	if a, b := MDE(6, 6, 0.05, 0.8), MDE(6, 6, 0.05, 0.8); a != b {
		t.Errorf("MDE not reproducible: %v, %v", a, b)
	}
	if a, b := MDE(6, 6, 0.05, 0.8), MDE(12, 12, 0.05, 0.8); !(b < a) {
		t.Errorf("more trials must detect less: MDE(6,6) = %v, MDE(12,12) = %v", a, b)
	}
	// Independent check: at the MDE, fresh simulated runs reject about
	// 80% of the time (the exact test, through ShiftAbove).
	rng := rand.New(rand.NewPCG(99, 1))
	for _, n := range [][2]int{{4, 4}, {6, 6}, {8, 5}} {
		d := MDE(n[0], n[1], 0.05, 0.8)
		const runs = 3000
		hits := 0
		for range runs {
			xs, ys := make([]float64, n[0]), make([]float64, n[1])
			for i := range xs {
				xs[i] = rng.NormFloat64()
			}
			for i := range ys {
				ys[i] = rng.NormFloat64() + d
			}
			if ShiftAbove(xs, ys, 0) <= 0.05 {
				hits++
			}
		}
		p := float64(hits) / runs
		if math.Abs(p-0.8) > 4*math.Sqrt(0.8*0.2/runs)+0.01 {
			t.Errorf("n=%v: power at MDE %.3f is %.3f, want 0.8", n, d, p)
		}
	}
}

func TestPooledSD(t *testing.T) {
	// Deviations ±1 on each side: 4 squares over 4−2 degrees of freedom.
	if got := PooledSD([]float64{1, 3}, []float64{10, 12}); !near(got, math.Sqrt(2), 1e-12) {
		t.Errorf("PooledSD = %v, want √2", got)
	}
	if got := SD([]float64{2, 4, 4, 4, 5, 5, 7, 9}); !near(got, math.Sqrt(32.0/7), 1e-12) {
		t.Errorf("SD = %v", got)
	}
	if !math.IsNaN(PooledSD([]float64{1}, []float64{1, 2})) || !math.IsNaN(SD(nil)) {
		t.Error("too few values must give NaN")
	}
}
