package gate

import (
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/wirebench/wirebench/results"
	"github.com/wirebench/wirebench/results/stats"
)

// Noise is what a reader needs to trust the verdict: how the run was
// protected from noise, and how noisy the machine still was.
type Noise struct {
	// Pinning says where client and server ran ("server on CPUs 1-3,
	// client on CPU 0"), or why they shared CPUs.
	Pinning string `json:"pinning"`
	Pinned  bool   `json:"pinned"`
	// Order is how the two cells' trials were interleaved.
	Order   string `json:"order"`
	Trials  string `json:"trials"` // "6+6"
	Machine string `json:"machine"`
	Quick   bool   `json:"quick,omitempty"`
	// AA is the A/A pair's difference on each metric, when the study ran
	// the base twice.
	AA *AA `json:"aa,omitempty"`
	// Warnings say when the machine's own variance is larger than a
	// tolerance, or trials failed, and carry the study's own warnings.
	Warnings []string `json:"warnings,omitempty"`
}

// AA is the base against its A/A partner: any difference is the
// machine's.
type AA struct {
	Cell   string    `json:"cell"`
	Checks []AACheck `json:"checks"`
}

// AACheck is one metric's A/A difference with its interval.
type AACheck struct {
	Metric string `json:"metric"`
	Delta  Num    `json:"delta"`
	Lo     Num    `json:"delta_lo"`
	Hi     Num    `json:"delta_hi"`
}

func noise(s *results.Study, r *Result, base, change, aa results.Cell, bt []results.Trial, o Options) Noise {
	n := Noise{Trials: fmt.Sprintf("%d+%d", r.Base.Trials, r.Change.Trials), Quick: s.Quick, Machine: machine(s)}
	n.Pinning, n.Pinned = pinning(s, base.ID, change.ID)
	n.Order = order(s)
	if s.Quick {
		n.Warnings = append(n.Warnings, "a quick run (short trials): gate on a full run")
	}
	for _, c := range r.Checks {
		if c.Verdict == Skipped {
			continue
		}
		tol := tolFor(o.Tolerances, c.Metric)
		spread := stats.PooledSD(badness(valuesOf(tol, bt), c.HigherIsBetter), badness(valuesOf(tol, s.TrialsOf(change.ID)), c.HigherIsBetter))
		if mde := math.Abs(float64(c.MDE)); c.Verdict == Undecidable && mde > math.Abs(tol.Pct)/100 && !math.IsInf(mde, 0) {
			more := "add trials"
			if c.TrialsNeeded > 0 {
				more = fmt.Sprintf("about %d trials per side would do", c.TrialsNeeded)
			}
			n.Warnings = append(n.Warnings, fmt.Sprintf("%s: this run's MDE (%s) is larger than the tolerance (%s): even an unchanged build can hardly pass; %s, or quiet the machine",
				c.Metric, pct(float64(c.MDE)), tol.Signed(), more))
		}
		if spread > tol.Boundary() {
			n.Warnings = append(n.Warnings, fmt.Sprintf("%s varies by ±%.1f%% between trials of the same build (pooled sd), more than its tolerance %s: the machine's own noise is larger than the change you want to catch (pin CPUs, quiet the machine, lengthen trials, or add trials)",
				c.Metric, 100*math.Expm1(spread), tol.Signed()))
		}
	}
	if aa.ID != "" {
		at := s.TrialsOf(aa.ID)
		n.AA = &AA{Cell: aa.ID}
		for _, t := range o.Tolerances {
			xs, ys := valuesOf(t, bt), valuesOf(t, at)
			if len(xs) == 0 || len(ys) == 0 {
				continue
			}
			hb := t.Metric.HigherIsBetter
			sh := stats.ShiftCI(badness(xs, hb), badness(ys, hb), r.Alpha)
			lo, hi := toDelta(sh.Lo, hb), toDelta(sh.Hi, hb)
			if !sh.HasCI() {
				lo, hi = math.Inf(-1), math.Inf(1)
			}
			c := AACheck{Metric: t.Metric.Name, Delta: Num(toDelta(sh.Est, hb)), Lo: Num(math.Min(lo, hi)), Hi: Num(math.Max(lo, hi))}
			n.AA.Checks = append(n.AA.Checks, c)
			b := t.Boundary()
			if math.Max(math.Abs(sh.Lo), math.Abs(sh.Hi)) > b {
				n.Warnings = append(n.Warnings, fmt.Sprintf("the A/A pair (%s against %s, the same build) differs on %s by %s [%s … %s], reaching past the tolerance %s: this machine cannot resolve changes that small",
					aa.ID, base.ID, t.Metric.Name, pct(float64(c.Delta)), pct(float64(c.Lo)), pct(float64(c.Hi)), t.Signed()))
			}
		}
	}
	for _, sd := range []Side{r.Base, r.Change} {
		if sd.Failed > 0 && sd.Trials > 0 {
			n.Warnings = append(n.Warnings, fmt.Sprintf("%s: %d of %d trials failed and are not judged%s", sd.Cell, sd.Failed, sd.Failed+sd.Trials, firstError(s, sd.Cell)))
		}
	}
	n.Warnings = append(n.Warnings, s.Warnings...)
	return n
}

func tolFor(ts []Tolerance, metric string) Tolerance {
	for _, t := range ts {
		if t.Metric.Name == metric {
			return t
		}
	}
	return Tolerance{}
}

func valuesOf(t Tolerance, ts []results.Trial) []float64 {
	var out []float64
	for _, tr := range ts {
		if v, ok := t.Metric.Value(tr); ok {
			out = append(out, v)
		}
	}
	return out
}

// pinning describes the CPUs of the compared cells' trials.
func pinning(s *results.Study, ids ...string) (string, bool) {
	var srv, cli []int
	pinned, all := 0, 0
	for _, t := range s.Trials {
		if !slices.Contains(ids, t.Cell) {
			continue
		}
		all++
		if len(t.ServerCPUs) > 0 && len(t.ClientCPUs) > 0 {
			pinned++
			srv, cli = t.ServerCPUs, t.ClientCPUs
		}
	}
	if all > 0 && pinned == all {
		return fmt.Sprintf("server on CPU %s, client on CPU %s (separate)", results.CPUList(srv), results.CPUList(cli)), true
	}
	for _, w := range s.Warnings {
		if strings.Contains(w, "pinning off") || strings.Contains(w, "could not pin") || strings.Contains(w, "share it") {
			return "not pinned: " + w, false
		}
	}
	if pinned > 0 {
		return fmt.Sprintf("pinned in %d of %d trials", pinned, all), false
	}
	return "not pinned: client and server shared CPUs", false
}

// order is how the study interleaved its trials, as recorded.
func order(s *results.Study) string {
	switch s.Options.Order {
	case "abba":
		return "ABBA (base, change, change, base, …), a fresh server per trial"
	case "":
		return "interleaved, a fresh server per trial"
	default:
		return s.Options.Order + ", a fresh server per trial"
	}
}

func machine(s *results.Study) string {
	e := s.Env
	var parts []string
	if e.CPUModel != "" {
		parts = append(parts, e.CPUModel)
	}
	if e.NumCPU > 0 {
		parts = append(parts, fmt.Sprintf("%d CPUs", e.NumCPU))
	}
	for _, p := range []string{e.Kernel, e.GoVersion} {
		if p != "" {
			parts = append(parts, p)
		}
	}
	if e.Hostname != "" {
		parts = append(parts, "host "+e.Hostname)
	}
	if len(parts) == 0 {
		return "not recorded"
	}
	return strings.Join(parts, ", ")
}
