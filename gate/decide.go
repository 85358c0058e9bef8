package gate

import (
	"encoding/json"
	"fmt"
	"math"

	"github.com/wirebench/wirebench/results/stats"
)

// Verdict is the gate's answer, for one metric or the whole change.
type Verdict string

// The verdicts, and their exit codes (ExitCode).
const (
	Pass        Verdict = "pass"        // within tolerance, shown at α
	Regression  Verdict = "regression"  // beyond tolerance, significant at α after correction
	Undecidable Verdict = "undecidable" // too few trials or too much noise to tell
	Skipped     Verdict = "skipped"     // the metric is not in the results (one metric only)
)

// ExitCode is the process exit code for CI: 0 pass, 1 regression,
// 3 undecidable (2 is the command line's usage error).
func (v Verdict) ExitCode() int {
	switch v {
	case Pass:
		return 0
	case Regression:
		return 1
	}
	return 3
}

// Num is a float64 that encodes NaN and ±Inf as JSON null.
type Num float64

// MarshalJSON writes null for a number JSON cannot hold.
func (n Num) MarshalJSON() ([]byte, error) {
	f := float64(n)
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return []byte("null"), nil
	}
	return json.Marshal(f)
}

// UnmarshalJSON reads null as NaN (it stood for NaN or an infinity: a
// number the run could not give).
func (n *Num) UnmarshalJSON(b []byte) error {
	if string(b) == "null" {
		*n = Num(math.NaN())
		return nil
	}
	return json.Unmarshal(b, (*float64)(n))
}

// Sample is one metric's trial values on both sides, with its tolerance.
type Sample struct {
	Tolerance    Tolerance
	Base, Change []float64
	// Skip, when set, says why the metric cannot be judged (not in the
	// results); Base and Change are then ignored.
	Skip string
}

// Check is one metric's judgement. Changes are fractions of the base
// (+0.12 is 12% more), signed as measured; MDE and Tolerance are signed
// in the metric's bad direction.
type Check struct {
	Metric         string  `json:"metric"`
	Desc           string  `json:"desc"`
	Unit           Unit    `json:"unit"`
	HigherIsBetter bool    `json:"higher_is_better"`
	Tolerance      float64 `json:"tolerance_pct"`
	NBase          int     `json:"n_base"`
	NChange        int     `json:"n_change"`
	// Base and Change are the sides' medians.
	Base   Num `json:"base"`
	Change Num `json:"change"`
	// Delta is change/base − 1 (Hodges-Lehmann on log values); [Lo, Hi]
	// its interval at Confidence (each end a one-sided test at α).
	Delta      Num     `json:"delta"`
	Lo         Num     `json:"delta_lo"`
	Hi         Num     `json:"delta_hi"`
	Confidence float64 `json:"confidence"`
	// PRegression is the one-sided p-value of "worse than the tolerance",
	// PRegressionAdj the same after Holm's correction over the judged
	// metrics, PWithin that of "within the tolerance".
	PRegression    Num `json:"p_regression"`
	PRegressionAdj Num `json:"p_regression_holm"`
	PWithin        Num `json:"p_within"`
	// MDE is the smallest change this run detects with 80% power (a
	// one-sided test at α/m for m judged metrics, with the run's spread);
	// +Inf (null) when the trials cannot reach that level at all.
	MDE Num `json:"mde"`
	// Spread is the typical trial-to-trial change within one side
	// (exp(pooled sd of log values) − 1).
	Spread Num `json:"spread"`
	// TrialsNeeded, when undecidable for noise, is about how many trials
	// per side would bring the MDE within the tolerance (0: unknown or
	// more than the limit).
	TrialsNeeded int     `json:"trials_needed,omitempty"`
	Verdict      Verdict `json:"verdict"`
	Why          string  `json:"why"`
}

// Decide judges each sample and the whole: Regression if any metric's
// regression test rejects after Holm's correction, Pass if every judged
// metric is shown within its tolerance, Undecidable otherwise (also when
// nothing could be judged).
func Decide(samples []Sample, alpha float64) ([]Check, Verdict) {
	checks := make([]Check, len(samples))
	var judged []int
	for i, s := range samples {
		m := s.Tolerance.Metric
		checks[i] = Check{Metric: m.Name, Desc: m.Desc, Unit: m.Unit, HigherIsBetter: m.HigherIsBetter, Tolerance: s.Tolerance.Pct,
			Confidence: 1 - 2*alpha, NBase: len(s.Base), NChange: len(s.Change),
			Base: Num(math.NaN()), Change: Num(math.NaN()), Delta: Num(math.NaN()), Lo: Num(math.NaN()), Hi: Num(math.NaN()),
			PRegression: 1, PRegressionAdj: 1, PWithin: 1, MDE: Num(math.Inf(1)), Spread: Num(math.NaN())}
		if s.Skip != "" {
			checks[i].Verdict, checks[i].Why = Skipped, s.Skip
			continue
		}
		if len(s.Base) == 0 || len(s.Change) == 0 {
			checks[i].Verdict, checks[i].Why = Skipped, "no trial has it on both sides"
			continue
		}
		judged = append(judged, i)
	}
	m := len(judged)
	var ps []float64
	for _, i := range judged {
		c, s := &checks[i], samples[i]
		b := s.Tolerance.Boundary()
		xs, ys := badness(s.Base, c.HigherIsBetter), badness(s.Change, c.HigherIsBetter)
		c.Base, c.Change = Num(stats.Summarize(s.Base).Center), Num(stats.Summarize(s.Change).Center)
		sh := stats.ShiftCI(xs, ys, alpha)
		c.Delta = Num(toDelta(sh.Est, c.HigherIsBetter))
		if sh.HasCI() {
			lo, hi := toDelta(sh.Lo, c.HigherIsBetter), toDelta(sh.Hi, c.HigherIsBetter)
			c.Lo, c.Hi = Num(math.Min(lo, hi)), Num(math.Max(lo, hi))
		} else { // too few trials for an interval at α: unbounded
			c.Lo, c.Hi = Num(math.Inf(-1)), Num(math.Inf(1))
		}
		c.PRegression = Num(stats.ShiftAbove(xs, ys, b))
		c.PWithin = Num(stats.ShiftBelow(xs, ys, b))
		sd := stats.PooledSD(xs, ys)
		c.Spread = Num(math.Expm1(sd))
		c.MDE = Num(mdeAt(len(xs), len(ys), alpha/float64(m), sd, c.HigherIsBetter))
		ps = append(ps, float64(c.PRegression))
	}
	adj := stats.Holm(ps)
	overall := Pass
	if m == 0 {
		overall = Undecidable
	}
	for k, i := range judged {
		c, s := &checks[i], samples[i]
		c.PRegressionAdj = Num(adj[k])
		c.Verdict, c.Why = judge(c, s.Tolerance, alpha, m)
		if c.Verdict == Undecidable && !tooFew(c.NBase, c.NChange, alpha, m) {
			c.TrialsNeeded = trialsNeeded(c.NBase, c.NChange, alpha/float64(m), stats.PooledSD(badness(s.Base, c.HigherIsBetter), badness(s.Change, c.HigherIsBetter)), s.Tolerance.Boundary())
		}
		switch {
		case c.Verdict == Regression:
			overall = Regression
		case c.Verdict == Undecidable && overall == Pass:
			overall = Undecidable
		}
	}
	return checks, overall
}

// judge words one metric's verdict.
func judge(c *Check, t Tolerance, alpha float64, m int) (Verdict, string) {
	interval := fmt.Sprintf("%s [%s … %s]", pct(float64(c.Delta)), pct(float64(c.Lo)), pct(float64(c.Hi)))
	switch {
	case float64(c.PRegressionAdj) <= alpha:
		holm := ""
		if m > 1 {
			holm = fmt.Sprintf(", %.3g after Holm over %d metrics", float64(c.PRegressionAdj), m)
		}
		return Regression, fmt.Sprintf("%s is beyond the tolerance %s (p = %.3g%s; α = %g)", interval, t.Signed(), float64(c.PRegression), holm, alpha)
	case tooFew(c.NBase, c.NChange, alpha, m):
		// A gate that could not have failed says nothing by passing.
		return Undecidable, fmt.Sprintf("%d+%d trials can never show a regression at α/%d = %.3g (the gate could not fail, so it cannot pass): run at least %d per side",
			c.NBase, c.NChange, m, alpha/float64(m), stats.MinShiftSamples(alpha/float64(m)))
	case float64(c.PWithin) <= alpha:
		return Pass, fmt.Sprintf("%s lies within the tolerance %s (p = %.3g)", interval, t.Signed(), float64(c.PWithin))
	case float64(c.PRegression) <= alpha:
		return Undecidable, fmt.Sprintf("%s is beyond the tolerance %s at α alone (p = %.3g) but not after Holm's correction over %d metrics (%.3g)",
			interval, t.Signed(), float64(c.PRegression), m, float64(c.PRegressionAdj))
	}
	return Undecidable, fmt.Sprintf("%s still includes the tolerance %s: too few trials or too much noise to rule out a regression of that size (MDE %s)",
		interval, t.Signed(), pct(float64(c.MDE)))
}

// tooFew reports whether n1+n2 trials can never reject at α/m, the level
// of Holm's first step over m metrics: even fully separated trials would
// not count as a regression.
func tooFew(n1, n2 int, alpha float64, m int) bool {
	return stats.MinShiftSamples(alpha/float64(m)) > min(n1, n2)
}

// badness maps values to log values oriented so that a regression is a
// rise: log v for costs, −log v for rates.
func badness(vs []float64, higherIsBetter bool) []float64 {
	out := make([]float64, len(vs))
	for i, v := range vs {
		out[i] = math.Log(v)
		if higherIsBetter {
			out[i] = -out[i]
		}
	}
	return out
}

// toDelta turns a badness shift back into change/base − 1.
func toDelta(shift float64, higherIsBetter bool) float64 {
	if higherIsBetter {
		return math.Expm1(-shift)
	}
	return math.Expm1(shift)
}

// mdeAt is the minimum detectable change as a fraction in the metric's
// bad direction: +x for costs, −x for rates.
func mdeAt(n1, n2 int, level, sd float64, higherIsBetter bool) float64 {
	d := stats.MDE(n1, n2, level, stats.Power)
	if math.IsNaN(sd) || math.IsInf(d, 0) {
		if higherIsBetter {
			return math.Inf(-1)
		}
		return math.Inf(1)
	}
	return toDelta(d*sd, higherIsBetter)
}

// trialsNeeded is about how many trials per side bring the MDE within
// the tolerance's boundary b: the MDE shrinks as 1/√n, so n grows by
// (mde/b)² from the run's effective size 2/(1/n1 + 1/n2). 0 when more
// than the study limit of 100 would be needed, or the MDE is unknown.
func trialsNeeded(n1, n2 int, level, sd, b float64) int {
	mde := stats.MDE(n1, n2, level, stats.Power) * sd
	if math.IsNaN(mde) || math.IsInf(mde, 0) || b <= 0 {
		return 0
	}
	n := math.Ceil(2 / (1/float64(n1) + 1/float64(n2)) * (mde / b) * (mde / b))
	if n > 100 {
		return 0
	}
	return max(int(n), stats.MinShiftSamples(level))
}

// pct prints a fraction as a signed percentage, "+12.3%"; "∞" for an
// infinite one.
func pct(f float64) string {
	switch {
	case math.IsNaN(f):
		return "—"
	case math.IsInf(f, 1):
		return "∞"
	case math.IsInf(f, -1):
		return "−∞"
	}
	return fmt.Sprintf("%+.1f%%", f*100)
}
