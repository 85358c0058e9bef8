package gate

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/wirebench/wirebench/results/stats"
)

// The A/A guard: the gate run on many synthetic studies with lognormal
// trial noise (5–20%, as trials on a shared machine spread), seeded.

// lognormal draws n trial values around center with log-sd sigma.
func lognormal(rng *rand.Rand, n int, center, sigma float64) []float64 {
	out := make([]float64, n)
	for i := range out {
		out[i] = center * math.Exp(sigma*rng.NormFloat64())
	}
	return out
}

// gateTolerances are the example: p99 +10%, rps −5%, CPU/req +5%.
func gateTolerances(t *testing.T) []Tolerance {
	t.Helper()
	ts, err := ParseTolerances([]string{"p99:+10%", "rps:-5%", "cpu_per_req:+5%"})
	if err != nil {
		t.Fatal(err)
	}
	return ts
}

// study draws one synthetic study: each metric's base around 1000 and its
// change moved by shift[i] in the bad direction (log units).
func study(rng *rand.Rand, ts []Tolerance, n int, sigma float64, shift []float64) []Sample {
	var out []Sample
	for i, tol := range ts {
		s := Sample{Tolerance: tol, Base: lognormal(rng, n, 1000, sigma)}
		c := 1000 * math.Exp(shift[i])
		if tol.Metric.HigherIsBetter {
			c = 1000 * math.Exp(-shift[i])
		}
		s.Change = lognormal(rng, n, c, sigma)
		out = append(out, s)
	}
	return out
}

// binomialLimit is p plus three standard errors of a rate over runs.
func binomialLimit(p float64, runs int) float64 {
	return p + 3*math.Sqrt(p*(1-p)/float64(runs))
}

// TestAAFalsePositiveRate: the same build on both sides fails the gate
// (exit 1) at most α of the time — and so does a change that sits exactly
// at every tolerance, the hardest case the guarantee covers. Checked for
// spreads of 5%, 10% and 20% at 6 and 10 trials per side.
func TestAAFalsePositiveRate(t *testing.T) {
	const runs, alpha = 1000, 0.05
	ts := gateTolerances(t)
	zero := make([]float64, len(ts))
	edge := make([]float64, len(ts))
	for i, tol := range ts {
		edge[i] = tol.Boundary()
	}
	// With tolerance 0% on every metric the gate is three plain one-sided
	// rank tests under Holm: the A/A must still fail at most α.
	var strict []Tolerance
	for _, tol := range ts {
		strict = append(strict, Tolerance{Metric: tol.Metric})
	}
	rng := rand.New(rand.NewPCG(37, 1))
	for _, tc := range []struct {
		name  string
		ts    []Tolerance
		shift []float64
	}{{"A/A", ts, zero}, {"at the tolerance", ts, edge}, {"A/A, tolerance 0%", strict, zero}} {
		for _, n := range []int{6, 10} {
			for _, sigma := range []float64{0.05, 0.10, 0.20} {
				fails, passes := 0, 0
				for range runs {
					_, v := Decide(study(rng, tc.ts, n, sigma, tc.shift), alpha)
					switch v {
					case Regression:
						fails++
					case Pass:
						passes++
					}
				}
				rate := float64(fails) / runs
				t.Logf("%-18s n=%2d+%-2d spread %2.0f%%: exit 1 in %5.2f%%, exit 0 in %5.1f%% of %d runs",
					tc.name, n, n, sigma*100, rate*100, float64(passes)/runs*100, runs)
				if rate > binomialLimit(alpha, runs) {
					t.Errorf("%s n=%d sigma=%v: false-positive rate %.3f > α = %v", tc.name, n, sigma, rate, alpha)
				}
			}
		}
	}
}

// TestPlantedRegressionPower: a regression planted on one metric at the
// tolerance plus the advertised MDE (at the true spread) fails the gate
// (exit 1) at least 80% of the time, within binomial error; and a huge
// one always does.
func TestPlantedRegressionPower(t *testing.T) {
	const runs, alpha = 1000, 0.05
	ts := gateTolerances(t)
	rng := rand.New(rand.NewPCG(37, 2))
	for _, n := range []int{6, 10} {
		for _, sigma := range []float64{0.05, 0.10, 0.20} {
			for i, tol := range ts {
				mde := stats.MDE(n, n, alpha/float64(len(ts)), stats.Power) * sigma
				shift := make([]float64, len(ts))
				shift[i] = tol.Boundary() + mde
				caught := 0
				for range runs {
					if _, v := Decide(study(rng, ts, n, sigma, shift), alpha); v == Regression {
						caught++
					}
				}
				power := float64(caught) / runs
				t.Logf("n=%2d+%-2d spread %2.0f%%: %-11s planted %s+MDE = %+.1f%%: caught in %5.1f%% of %d runs",
					n, n, sigma*100, tol.Metric.Name, tol.Signed(), 100*toDelta(shift[i], tol.Metric.HigherIsBetter), power*100, runs)
				if power < stats.Power-3*math.Sqrt(stats.Power*(1-stats.Power)/runs) {
					t.Errorf("n=%d sigma=%v %s: power %.3f < %v at the advertised MDE", n, sigma, tol.Metric.Name, power, stats.Power)
				}
			}
		}
	}
	// A 3× CPU cost (as the end-to-end test plants) with 10% noise at 6+6.
	for range 200 {
		if _, v := Decide(study(rng, ts, 6, 0.10, []float64{0, 0, math.Log(3)}), alpha); v != Regression {
			t.Fatalf("a 3× cost was judged %s", v)
		}
	}
}

// TestTooFewTrialsIsUndecidable: 3+3 trials can never reach α/3 = 0.0167
// one sided (P(U = 0) = 1/20), so with three metrics the gate could never
// fail: it must not pass either, whatever the data — not even a planted
// 3× cost counts as a regression.
func TestTooFewTrialsIsUndecidable(t *testing.T) {
	ts := gateTolerances(t)
	rng := rand.New(rand.NewPCG(37, 3))
	for _, shift := range [][]float64{{0, 0, 0}, {0, 0, math.Log(3)}} {
		for range 200 {
			checks, v := Decide(study(rng, ts, 3, 0.02, shift), 0.05)
			if v != Undecidable {
				t.Fatalf("3+3 trials judged %s", v)
			}
			for _, c := range checks {
				if c.Verdict != Undecidable || c.TrialsNeeded != 0 || !math.IsInf(float64(c.MDE), 0) {
					t.Fatalf("%s: %s (%s), MDE %v", c.Metric, c.Verdict, c.Why, c.MDE)
				}
			}
		}
	}
}

// TestAAPassRate: with the default tolerances and trials whose spread is
// well under them, the same build on both sides passes (exit 0) most of
// the time, never fails, and is undecidable otherwise: the gate can say
// "no regression", not only "cannot tell".
func TestAAPassRate(t *testing.T) {
	const runs, alpha = 1000, 0.05
	ts := DefaultTolerances()
	rng := rand.New(rand.NewPCG(37, 4))
	for _, tc := range []struct {
		n       int
		sigma   float64
		minPass float64
	}{{6, 0.03, 0.95}, {10, 0.05, 0.90}, {6, 0.10, 0}} {
		pass, fail := 0, 0
		for range runs {
			switch _, v := Decide(study(rng, ts, tc.n, tc.sigma, make([]float64, len(ts))), alpha); v {
			case Pass:
				pass++
			case Regression:
				fail++
			}
		}
		t.Logf("defaults %v, n=%d+%d, spread %.0f%%: exit 0 in %.1f%%, exit 1 in %.1f%% of %d A/A runs",
			DefaultToleranceText, tc.n, tc.n, tc.sigma*100, 100*float64(pass)/runs, 100*float64(fail)/runs, runs)
		if float64(pass)/runs < tc.minPass || float64(fail)/runs > binomialLimit(alpha, runs) {
			t.Errorf("n=%d sigma=%v: pass rate %.3f (want ≥ %v), fail rate %.3f", tc.n, tc.sigma, float64(pass)/runs, tc.minPass, float64(fail)/runs)
		}
	}
}
