package report

import (
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/wirebench/wirebench/results"
)

// Capacity (results.Capacity) is the headline wherever a cell measured
// it: the most load within the SLO, per server and per server core. The
// trial's Load is the answer's measurement (the confirmation run), so the
// other metrics describe the server at its capacity.
func init() {
	vsMetrics["capacity"] = true
}

// capacityMetric is the key findings and main tables lead with when a
// group measured capacity.
const capacityMetric = "capacity"

// perCoreKey is capacity per core of the server's quota: what findings
// compare when a group's servers ran under different quotas.
const perCoreKey = "capacity_per_core"

// mixedQuotas reports whether g's searches ran under more than one CPU
// quota (no quota counting as one): a study lowers a cell's quota when
// its search ended on the client's limit.
func mixedQuotas(g Group) bool {
	seen := map[float64]bool{}
	for _, c := range g.Cells {
		for _, cp := range c.Capacity {
			cores := 0.0
			if cp.ServerQuota != nil {
				cores = cp.ServerQuota.Cores
			}
			seen[cores] = true
		}
	}
	return len(seen) > 1
}

// capacities are a cell's capacity searches, in trial order.
func capacities(r *results.Study, id string) []*results.Capacity {
	var out []*results.Capacity
	for _, t := range r.TrialsOf(id) {
		if t.Capacity != nil {
			out = append(out, t.Capacity)
		}
	}
	return out
}

// groupSLO is the SLO of g's searches ("p99<20ms"), or "" if they differ
// or there are none.
func groupSLO(g Group) string {
	slo := ""
	for _, c := range g.Cells {
		for _, cp := range c.Capacity {
			s := strings.Join(cp.SLO, ", ")
			if slo != "" && s != slo {
				return ""
			}
			slo = s
		}
	}
	return slo
}

// capacityFinding words a cell's capacity against the baseline's:
// "toon carries 1.31× json's load at p99<20ms [1.22…1.40] (p=0.008,
// 5 trials), per core 1.35×".
func capacityFinding(g Group, i int) (Verdict, string) {
	c, base := g.Cells[i], g.Cells[0]
	key, per := capacityMetric, ""
	if g.answerKey() == perCoreKey {
		key, per = perCoreKey, " per core of its quota"
	}
	d, ok := g.VsBaseline(i, key)
	at := ""
	if slo := groupSLO(g); slo != "" {
		at = " at " + slo
	}
	if !ok || d.Old.Center <= 0 {
		var why []string
		for _, cell := range []CellSummary{base, c} {
			if n := untrusted(cell); n > 0 {
				why = append(why, fmt.Sprintf("%s: %d of %d trials (%s)", cell.Cell.Label, n, len(cell.Capacity), untrustedWhy(cell)))
			}
		}
		if len(why) > 0 {
			return NoData, fmt.Sprintf("%s vs %s: cannot answer%s: no trusted capacity to compare, excluded %s", c.Cell.Label, base.Cell.Label, at, strings.Join(why, "; "))
		}
		return NoData, fmt.Sprintf("%s vs %s: no capacity to compare%s", c.Cell.Label, base.Cell.Label, at)
	}
	ratio := d.New.Center / d.Old.Center
	lo, hi := d.PctRange()
	rng := ""
	if !math.IsNaN(lo) && !math.IsNaN(hi) {
		rng = fmt.Sprintf(" [%s…%s]", ratioText(1+lo/100), ratioText(1+hi/100))
	}
	carries := fmt.Sprintf("%s carries %s× %s's load%s%s%s", c.Cell.Label, ratioText(ratio), base.Cell.Label, per, at, rng)
	v, _ := judge(d, "capacity", true)
	var text string
	switch v {
	case Undecided:
		text = fmt.Sprintf("%s: %s", cannotDecide(d, "cannot decide", ""), carries)
	case Same:
		text = fmt.Sprintf("%s carries ~ %s's load%s%s (%s×, no significant difference, p=%.3f, %s)", c.Cell.Label, base.Cell.Label, per, at, ratioText(ratio), d.P, trialCount(d))
	default:
		text = fmt.Sprintf("%s (p=%.3f, %s)", carries, d.P, trialCount(d))
	}
	if pc, ok := g.VsBaseline(i, perCoreKey); ok && pc.Old.Center > 0 && key == capacityMetric {
		text += fmt.Sprintf(", per core %s×", ratioText(pc.New.Center/pc.Old.Center))
	}
	for _, cell := range []CellSummary{base, c} {
		if n := untrusted(cell); n > 0 {
			text += fmt.Sprintf("; %d of %d of %s's trials excluded (%s)", n, len(cell.Capacity), cell.Cell.Label, untrustedWhy(cell))
		}
		if n := disturbedTrials(cell); n > 0 {
			text += fmt.Sprintf("; %s: %d of %d trials disturbed", cell.Cell.Label, n, len(cell.Capacity))
		}
		if n := lowerBounds(cell); n > 0 {
			text += fmt.Sprintf("; %s's capacity is a lower bound in %d of %d trials (%s)", cell.Cell.Label, n, len(cell.Capacity), lowerBoundWhy(cell))
		}
	}
	return v, text
}

// untrusted counts a cell's searches whose answer cannot stand for the
// server's capacity (results.Capacity.Untrusted): left out of its median.
func untrusted(c CellSummary) int {
	n := 0
	for _, cp := range c.Capacity {
		if cp.Untrusted() != "" {
			n++
		}
	}
	return n
}

func untrustedWhy(c CellSummary) string {
	var why []string
	for _, cp := range c.Capacity {
		if w := cp.Untrusted(); w != "" && !slices.Contains(why, w) {
			why = append(why, w)
		}
	}
	return strings.Join(why, "; ")
}

func ratioText(r float64) string {
	if r >= 10 {
		return fmt.Sprintf("%.1f", r)
	}
	return fmt.Sprintf("%.2f", r)
}

// lowerBounds counts a cell's trusted searches whose answer is only a
// lower bound: every rate up to the maximum passed.
func lowerBounds(c CellSummary) int {
	n := 0
	for _, cp := range c.Capacity {
		if cp.Limit == results.LimitMaxRate && cp.Untrusted() == "" {
			n++
		}
	}
	return n
}

func lowerBoundWhy(CellSummary) string { return "every rate up to --max-rate passed" }

// capacityTable is one row per search: the answer, its interval, why the
// search stopped, whether the confirmation passed, and the steps taken.
func capacityTable(g Group) table {
	t := table{Header: []string{"cell", "trial", "capacity", "interval", "SLO", "stopped", "confirmed", "server CPU/req", "CPU quota", "steps", "disturbed"}}
	for _, c := range g.Cells {
		for k, cp := range c.Capacity {
			interval := fmt.Sprintf("[%s, %s)", results.FormatRate(cp.Low), results.FormatRate(cp.High))
			if cp.High == 0 {
				interval = fmt.Sprintf("≥ %s", results.FormatRate(cp.Low))
			}
			conf := "—"
			if cp.Confirm != nil {
				conf = map[bool]string{true: "yes", false: "no"}[cp.Confirm.Passed()]
			}
			srv := "—"
			if cp.ServerCPUPerRequest > 0 {
				srv = results.FormatDuration(cp.ServerCPUPerRequest)
			}
			t.Rows = append(t.Rows, []string{c.Cell.Label, itoa(k + 1), results.FormatRate(cp.Rate), interval,
				strings.Join(cp.SLO, ", "), cp.Limit, conf, srv, quotaText(cp.ServerQuota), itoa(len(cp.Steps)), disturbedText(cp)})
		}
	}
	return t
}

// stepsTable is a single search's steps, as the command prints them.
func stepsTable(cp *results.Capacity) table {
	t := table{Header: []string{"step", "offered", "achieved", "p50", "p99", "service p99", "lag p99", "errors", "client CPU", "verdict", "why"}}
	row := func(name string, s *results.CapacityStep) {
		t.Rows = append(t.Rows, []string{name, results.FormatRate(s.Offered), results.FormatRate(s.Achieved),
			results.FormatDuration(s.P50), results.FormatDuration(s.P99), results.FormatDuration(s.ServiceP99), results.FormatDuration(s.LagP99),
			fmt.Sprintf("%.2f%%", 100*s.ErrorRate()), fmt.Sprintf("%.0f%%", 100*s.ClientCPU), s.Verdict, s.Why})
	}
	for i := range cp.Steps {
		row(itoa(i+1), &cp.Steps[i])
	}
	if cp.Confirm != nil {
		row("confirm", cp.Confirm)
	}
	return t
}

// groupHasCapacity reports whether any cell of g measured capacity.
func groupHasCapacity(g Group) bool {
	for _, c := range g.Cells {
		if len(c.Capacity) > 0 {
			return true
		}
	}
	return false
}

// capacityPlot draws, per cell, p99 (solid) and p50 (dashed) latency
// against the offered rate of every step of every trial, on a log
// latency axis (a failing step's seconds and a passing step's
// milliseconds both fit), with the SLO's latency bounds as horizontal
// lines and each cell's capacity (median over trials) as a vertical
// line: the knee. Filled dots passed, hollow failed, squares are steps
// the client could not keep up with.
func capacityPlot(g Group) string {
	h, top, bottom, left := 320.0, 16.0, 60.0, 70.0
	right := plotW - plotRight
	lo, hi, maxRate := math.Inf(1), 0.0, 0.0
	var bounds []time.Duration
	var sloNames []string
	for _, c := range g.Cells {
		for _, cp := range c.Capacity {
			for _, s := range cp.Steps {
				maxRate = math.Max(maxRate, s.Offered)
				for _, d := range []time.Duration{s.P50, s.P99} {
					if d > 0 {
						lo, hi = math.Min(lo, float64(d)), math.Max(hi, float64(d))
					}
				}
			}
			for _, e := range cp.SLO {
				if th, err := results.ParseThreshold(e); err == nil {
					if b, ok := th.Bound(); ok && !slices.Contains(sloNames, e) {
						bounds, sloNames = append(bounds, b), append(sloNames, e)
						lo, hi = math.Min(lo, float64(b)), math.Max(hi, float64(b))
					}
				}
			}
		}
	}
	var labels, colors []string
	for i, c := range g.Cells {
		if len(c.Capacity) > 0 {
			labels, colors = append(labels, c.Cell.Label), append(colors, color(i))
		}
	}
	extra := legendLineH * float64(max(0, legendLines(left, right, labels)-1))
	h, bottom = h+extra, bottom+extra
	s := newSVG(plotW, h, g.Name+": latency against offered rate (p99 solid, p50 dashed), SLO and capacity")
	if maxRate == 0 || hi == 0 {
		s.text(plotW/2, h/2, "middle", "axis", "no capacity steps to plot")
		return s.String()
	}
	// Decades of latency from below the lowest to above the highest.
	d0, d1 := math.Floor(math.Log10(lo)), math.Ceil(math.Log10(hi))
	if d1 == d0 {
		d1++
	}
	y := scale{d0, d1, h - bottom, top}
	ly := func(d float64) float64 { return y.at(math.Log10(math.Max(d, math.Pow(10, d0)))) }
	for e := d0; e <= d1; e++ {
		s.line(left, y.at(e), right, y.at(e), "grid")
		s.text(left-6, y.at(e)+4, "end", "tick", trimZeros(formatDuration(time.Duration(math.Pow(10, e)))))
	}
	ticks := niceTicks(maxRate, 5)
	x := scale{0, ticks[len(ticks)-1], left, right}
	for _, t := range ticks {
		s.line(x.at(t), top, x.at(t), h-bottom, "grid")
		s.text(x.at(t), h-bottom+16, "middle", "tick", trimZeros(formatSI(t)))
	}
	s.text((left+right)/2, h-bottom+32, "middle", "axis", "offered rate, requests per second (latency on a log scale)")
	for k, b := range bounds {
		s.f(`<line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" stroke="#D55E00" stroke-width="1.5" stroke-dasharray="6 3"><title>SLO %s</title></line>`,
			left, ly(float64(b)), right, ly(float64(b)), esc(sloNames[k]))
		s.text(right-4, ly(float64(b))-4, "end", "tick", "SLO "+sloNames[k])
	}
	for i, c := range g.Cells {
		for _, cp := range c.Capacity {
			steps := slices.Clone(cp.Steps)
			slices.SortFunc(steps, func(a, b results.CapacityStep) int { return int(math.Copysign(1, a.Offered-b.Offered)) })
			for _, q := range []struct {
				get  func(results.CapacityStep) time.Duration
				dash string
			}{{func(s results.CapacityStep) time.Duration { return s.P99 }, ""}, {func(s results.CapacityStep) time.Duration { return s.P50 }, ` stroke-dasharray="4 3"`}} {
				s.f(`<polyline fill="none" stroke="%s" stroke-width="1.8"%s points="`, color(i), q.dash)
				for _, st := range steps {
					s.f("%.1f,%.1f ", x.at(st.Offered), ly(float64(q.get(st))))
				}
				s.f(`"/>`)
			}
			for _, st := range steps {
				px, py := x.at(st.Offered), ly(float64(st.P99))
				tip := fmt.Sprintf("%s: %s offered, p99 %s, %s", c.Cell.Label, results.FormatRate(st.Offered), results.FormatDuration(st.P99), st.Verdict)
				switch st.Verdict {
				case results.StepPass:
					s.f(`<circle cx="%.1f" cy="%.1f" r="3.5" fill="%s"><title>%s</title></circle>`, px, py, color(i), esc(tip))
				case results.StepFail:
					s.f(`<circle cx="%.1f" cy="%.1f" r="3.5" fill="white" stroke="%s" stroke-width="1.5"><title>%s</title></circle>`, px, py, color(i), esc(tip))
				default:
					s.f(`<rect x="%.1f" y="%.1f" width="7" height="7" fill="white" stroke="%s" stroke-width="1.5"><title>%s</title></rect>`, px-3.5, py-3.5, color(i), esc(tip))
				}
			}
		}
		if st, ok := c.Stat(capacityMetric); ok && st.Center > 0 {
			kx := x.at(st.Center)
			s.f(`<line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" stroke="%s" stroke-width="1.2" stroke-dasharray="2 2"><title>%s: capacity %s</title></line>`,
				kx, top, kx, h-bottom, color(i), esc(c.Cell.Label), esc(results.FormatRate(st.Center)))
			s.text(kx+3, top+10+12*float64(i), "start", "tick", c.Cell.Label+" "+results.FormatRate(st.Center))
		}
	}
	s.legend(left, h-8, right, labels, colors)
	return s.String()
}

// stepCols are the CSV columns of the capacity curve's "step" rows
// (beside req_per_s, the achieved rate, and p50_ms and p99_ms).
var stepCols = []string{"trial", "step", "offered_req_per_s", "service_p99_ms", "lag_p99_ms", "error_pct", "client_cpu_pct", "verdict", "why"}

// csvMetrics are the metrics of rep's CSV: every one but the optional
// metrics no cell has.
func csvMetrics(rep *Report) []Metric {
	var out []Metric
	for _, m := range Metrics {
		has := !m.Optional
		for _, g := range rep.Groups {
			has = has || groupHas(g, m.Key)
		}
		if has {
			out = append(out, m)
		}
	}
	return out
}

func countOptional() int {
	n := 0
	for _, m := range Metrics {
		if m.Optional {
			n++
		}
	}
	return n
}

// writeStepRows writes a cell's capacity curve: one "step" row per step
// of every search (the confirmation run is step "confirm").
func writeStepRows(cw safeCSV, g Group, i int, c CellSummary, width, at int, col map[string]int) {
	ms := func(d time.Duration) string { return num(float64(d) / 1e6) }
	for k, cp := range c.Capacity {
		write := func(name string, s *results.CapacityStep) {
			row := make([]string, width)
			copy(row, []string{"step", g.Name, c.Cell.ID, c.Cell.Label, strconv.FormatBool(i == 0 && len(g.Cells) > 1), "",
				"", "", strconv.FormatInt(s.Requests, 10), strconv.FormatInt(s.Failed, 10)})
			row[col["req_per_s"]] = num(s.Achieved)
			row[col["p50_ms"]] = ms(s.P50)
			row[col["p99_ms"]] = ms(s.P99)
			copy(row[at:], []string{itoa(k + 1), name, num(s.Offered), ms(s.ServiceP99), ms(s.LagP99),
				num(100 * s.ErrorRate()), num(100 * s.ClientCPU), s.Verdict, s.Why})
			_ = cw.Write(row)
		}
		for j := range cp.Steps {
			write(itoa(j+1), &cp.Steps[j])
		}
		if cp.Confirm != nil {
			write("confirm", cp.Confirm)
		}
	}
}

// writeCapacityCompare sets two single capacity searches side by side,
// before their answers' runs are: each answer with its interval, and the
// change, which is called within precision when the intervals overlap.
// Nothing is written unless both are capacity searches.
func writeCapacityCompare(w io.Writer, oldName, newName string, old, new *results.Study) error {
	if len(old.Trials) != 1 || len(new.Trials) != 1 || old.Trials[0].Capacity == nil || new.Trials[0].Capacity == nil {
		return nil
	}
	o, n := old.Trials[0].Capacity, new.Trials[0].Capacity
	ew := &errWriter{w: w}
	fmt.Fprintf(ew, "wirebench compare: two capacity searches\n\n")
	fmt.Fprintf(ew, "  %s: capacity %s\n", oldName, results.CapacityLine(o))
	fmt.Fprintf(ew, "  %s: capacity %s\n", newName, results.CapacityLine(n))
	if slices.Equal(o.SLO, n.SLO) && o.Rate > 0 && n.Rate > 0 {
		change := fmt.Sprintf("%s× (%s)", ratioText(n.Rate/o.Rate), signedPct((n.Rate/o.Rate-1)*100))
		if overlap(o, n) {
			change += ": the intervals overlap, so the two are the same within the search's precision"
		}
		fmt.Fprintf(ew, "  change: %s vs %s %s\n", newName, oldName, change)
	} else if !slices.Equal(o.SLO, n.SLO) {
		fmt.Fprintf(ew, "  the SLOs differ: the capacities answer different questions\n")
	}
	fmt.Fprintf(ew, "\nat each answer:\n\n")
	return ew.err
}

// overlap reports whether two searches' intervals [Low, High) overlap
// (an open High is +∞).
func overlap(a, b *results.Capacity) bool {
	hi := func(c *results.Capacity) float64 {
		if c.High == 0 {
			return math.Inf(1)
		}
		return c.High
	}
	return a.Low < hi(b) && b.Low < hi(a)
}

// errWriter keeps the first write error, so a sequence of prints is
// checked once.
type errWriter struct {
	w   io.Writer
	err error
}

func (e *errWriter) Write(p []byte) (int, error) {
	if e.err != nil {
		return 0, e.err
	}
	n, err := e.w.Write(p)
	e.err = err
	return n, err
}

// quotaText is a search's server CPU quota in a table cell: "0.5 CPU".
func quotaText(q *results.CPUQuota) string {
	if q == nil {
		return "—"
	}
	return strconv.FormatFloat(q.Cores, 'f', -1, 64) + " CPU"
}

// quotaLine says under which CPU quota the group's servers ran ("" none),
// and that capacity per core is per core of it.
func quotaLine(g Group) string {
	if mixedQuotas(g) {
		return mixedQuotaLine(g)
	}
	var q *results.CPUQuota
	n, all := 0, 0
	for _, c := range g.Cells {
		for _, cp := range c.Capacity {
			all++
			if cp.ServerQuota != nil {
				q, n = cp.ServerQuota, n+1
			}
		}
	}
	if q == nil {
		return ""
	}
	of := ""
	if n < all {
		of = fmt.Sprintf(" (%d of %d searches)", n, all)
	}
	return fmt.Sprintf("The servers ran under a CPU quota of %s%s, %s; capacity/core is per core of the quota.", q, of, q.Why())
}

// disturbedTrials counts a cell's searches that noticed a disturbance
// (retried steps, failed confirmations, a disturbed bound).
func disturbedTrials(c CellSummary) int {
	n := 0
	for _, cp := range c.Capacity {
		if disturbedText(cp) != "—" {
			n++
		}
	}
	return n
}

// disturbedText is a search's disturbances in a table cell: "2 retried,
// bound", or "—".
func disturbedText(cp *results.Capacity) string {
	var parts []string
	retried := 0
	for _, s := range cp.Steps {
		if s.Retried {
			retried++
		}
	}
	if retried > 0 {
		parts = append(parts, itoa(retried)+" retried")
	}
	if len(cp.Disturbed) > 0 {
		parts = append(parts, itoa(len(cp.Disturbed))+" left")
	}
	if cp.BoundDisturbed {
		parts = append(parts, "bound disturbed")
	}
	if len(parts) == 0 {
		return "—"
	}
	return strings.Join(parts, ", ")
}

// mixedQuotaLine names each cell's quotas when they differ, and says the
// cells compare per core of theirs.
func mixedQuotaLine(g Group) string {
	var parts []string
	for _, c := range g.Cells {
		var qs []string
		for _, cp := range c.Capacity {
			t := "no quota"
			if q := cp.ServerQuota; q != nil {
				t = quotaText(q)
				if q.Source == results.QuotaLowered {
					t += " (" + q.Why() + ")"
				}
			}
			if !slices.Contains(qs, t) {
				qs = append(qs, t)
			}
		}
		if len(qs) > 0 {
			parts = append(parts, c.Cell.Label+": "+strings.Join(qs, ", "))
		}
	}
	return "The servers ran under different CPU quotas (" + strings.Join(parts, "; ") + "), so the cells compare in capacity per core of their quotas."
}
