package report

import (
	"fmt"
	"math"
	"strings"

	"github.com/wirebench/wirebench/results"
	"github.com/wirebench/wirebench/results/stats"
)

// A report answers its study's question: how does each cell compare with
// its baseline? So the headline is one finding per cell against the
// baseline of its group — never the two fastest rows against each other —
// and each finding says how sure it is: a significant change with its
// p-value, "~" only when enough trials found no difference, and "cannot
// decide" with the observed change and its range when too few trials
// were run for the test to find anything.

// Verdict is what a comparison with the baseline concluded.
type Verdict int

// Verdicts of a Finding.
const (
	Undecided Verdict = iota // too few trials for the test to decide
	Same                     // enough trials, no significant difference
	Better                   // significantly better than the baseline
	Worse                    // significantly worse
	NoData                   // nothing to compare
)

// Finding is one cell compared with its group's baseline, in words.
type Finding struct {
	Cell, Baseline string
	Verdict        Verdict // on the group's answer metric (Group.Answer)
	Text           string  // "toon vs json: -39% server CPU/req [-47…-31%] (p=0.002, 6 trials), 30% fewer bytes/request"
}

// headlineMetric is the metric findings are decided on when the study
// names none (Group.Answer); bytes per request are stated beside it as
// measured (they hardly vary between trials).
const (
	headlineMetric = "rps"
	headlineBytes  = "recv_wire_per_req"
)

// Findings compares every cell of g but the baseline with the baseline.
func (g Group) Findings() []Finding {
	var out []Finding
	if len(g.Cells) < 2 {
		return nil
	}
	base := g.Cells[0].Cell.Label
	for i := 1; i < len(g.Cells); i++ {
		c := g.Cells[i]
		f := Finding{Cell: c.Cell.Label, Baseline: base, Verdict: NoData}
		if groupHasCapacity(g) {
			f.Verdict, f.Text = capacityFinding(g, i)
			out = append(out, f)
			continue
		}
		parts := []string{}
		key := g.answerKey()
		m, _ := MetricByKey(key)
		if d, ok := g.VsBaseline(i, key); ok {
			var text string
			f.Verdict, text = judge(d, answerUnit(key), m.HigherIsBetter)
			parts = append(parts, text)
		} else {
			parts = append(parts, "no "+answerUnit(key)+" to compare")
		}
		if b := bytesChange(g, i); b != "" {
			parts = append(parts, b)
		}
		f.Text = fmt.Sprintf("%s vs %s: %s", f.Cell, base, strings.Join(parts, ", "))
		out = append(out, f)
	}
	return out
}

// judge words one comparison: the verdict first, then the change of the
// median and the range it may lie in.
func judge(d stats.Delta, what string, higherIsBetter bool) (Verdict, string) {
	pct := d.Pct()
	change := fmt.Sprintf("%s %s %s", signedPct(pct), what, pctRange(d))
	switch {
	case math.IsNaN(pct):
		return NoData, "no " + what + " to compare"
	case !d.Significant() && !d.Decidable():
		return Undecided, fmt.Sprintf("%s: %s", cannotDecide(d, "cannot decide", ""), change)
	case !d.Significant() || d.New.Center == d.Old.Center:
		return Same, fmt.Sprintf("~ %s, no significant difference (p=%.3f, %s)", what, d.P, trialCount(d))
	}
	v := Worse
	if (pct > 0) == higherIsBetter {
		v = Better
	}
	return v, fmt.Sprintf("%s (p=%.3f, %s)", change, d.P, trialCount(d))
}

// trialCount is "2 trials" or "2+3 trials".
func trialCount(d stats.Delta) string {
	if d.Old.N == d.New.N {
		if d.Old.N == 1 {
			return "1 trial"
		}
		return fmt.Sprintf("%d trials", d.Old.N)
	}
	return fmt.Sprintf("%d+%d trials", d.Old.N, d.New.N)
}

// pctRange is "[+31…+47%]": how far the change may go given the two
// cells' intervals (or ranges of trials, when too few for intervals).
func pctRange(d stats.Delta) string {
	lo, hi := d.PctRange()
	if math.IsNaN(lo) || math.IsNaN(hi) {
		return ""
	}
	return fmt.Sprintf("[%s…%s]", strings.TrimSuffix(signedPct(lo), "%"), signedPct(hi))
}

func signedPct(p float64) string {
	switch {
	case math.IsNaN(p):
		return "?"
	case math.Abs(p) < 10:
		return fmt.Sprintf("%+.1f%%", p)
	}
	return fmt.Sprintf("%+.0f%%", p)
}

// bytesChange is "30% fewer bytes/request", from the medians: bytes per
// request are near-deterministic, so they are stated, not tested.
func bytesChange(g Group, i int) string {
	o, okO := g.Cells[0].Stat(headlineBytes)
	n, okN := g.Cells[i].Stat(headlineBytes)
	if !okO || !okN || o.Center <= 0 {
		return ""
	}
	p := (n.Center/o.Center - 1) * 100
	switch {
	case math.Abs(p) < 0.5:
		return "same bytes/request"
	case p < 0:
		return fmt.Sprintf("%.0f%% fewer bytes/request", -p)
	}
	return fmt.Sprintf("%.0f%% more bytes/request", p)
}

// question is what the study asks, with a generic question for studies
// that state none.
func question(r *results.Study) string {
	if r.Question != "" {
		return r.Question
	}
	if r.SingleRun || !r.HasLoad() {
		return ""
	}
	return "How does each cell compare with its group's baseline?"
}

// baselines names each group's baseline: "json (crud c=50), http1 (echo c=1)".
func baselines(rep *Report) string {
	var out []string
	for _, g := range rep.Groups {
		if len(g.Cells) < 2 {
			continue
		}
		b := g.Cells[0].Cell.Label
		if len(rep.Groups) > 1 {
			b += " (" + g.Name + ")"
		}
		out = append(out, b)
	}
	return strings.Join(out, ", ")
}

// singleRunLine sums up a single load run in one line.
func singleRunLine(c CellSummary) string {
	var parts []string
	if len(c.Capacity) == 1 {
		parts = append(parts, "capacity "+results.CapacityLine(c.Capacity[0])+"; there")
	}
	for _, k := range []string{"rps", "lat_p50", "lat_p99"} {
		m, _ := MetricByKey(k)
		if s, ok := c.Stat(k); ok {
			parts = append(parts, m.Label+" "+formatValue(m.Unit, s.Center))
		}
	}
	parts = append(parts, formatChecks(c))
	return strings.Join(parts, ", ")
}
