package report

import (
	"github.com/wirebench/wirebench/results"
	"github.com/wirebench/wirebench/results/stats"

	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/wirebench/wirebench/measure"
)

// Report is a study's results digested for rendering: per cell, every
// metric summarized across trials; per group, comparisons against the
// group's baseline. All renderers (Markdown, CSV, HTML) draw from it, so
// they cannot disagree.
type Report struct {
	Results  *results.Study
	Groups   []Group
	Warnings []string // run-wide caveats, quick-run first
}

// Group is the cells compared with one another; Cells[0] is the baseline
// (the cell marked Baseline, else the group's first).
type Group struct {
	Name  string
	Cells []CellSummary
	// Load says how the load was applied to the group's cells: "closed
	// loop, 50 VUs, 10s per trial" (several when cells differ).
	Load string
	// Answer is the metric key the group's findings and main table
	// compare on: the study's answer metric, capacity where measured,
	// p50 latency for in-browser cells (answer.go).
	Answer string
	// Link is the emulated network of the group's cells (a study's links
	// axis), "" without one.
	Link string
}

// GroupName is the name of the group of c: its group, and on a study's
// links axis its link ("crud on 3g").
func GroupName(c results.Cell) string {
	switch {
	case c.Link == "":
		return c.Group
	case c.Group == "":
		return "on " + c.Link
	}
	return c.Group + " on " + c.Link
}

// CellSummary is one cell over its trials.
type CellSummary struct {
	Cell         results.Cell
	Trials       int // trials with a load result
	FailedTrials int // trials that ended in an error
	// Values are the per-trial values of each metric (by Metric.Key), in
	// trial-index order; Stats their summaries.
	Values map[string][]float64
	Stats  map[string]stats.Summary
	// Checks: every response is checked (fairness rule 2).
	Requests, Failed int64
	// CheckRuns and CheckFailed count the study's per-trial check
	// commands (e.g. "count the rows") run after the load, and how many
	// of them failed.
	CheckRuns, CheckFailed int
	Failures               map[string]int64
	// Latency is every trial's latency histogram merged, for percentile
	// curves; tables use per-trial percentiles instead.
	Latency *measure.Histogram
	// RSS holds each trial's server samples, for memory-over-time plots.
	RSS [][]results.ProcSample
	// Ops are the scenario's operations, each summarized on its own.
	Ops []OpSummary
	// Capacity are the cell's capacity searches (measure: capacity), in
	// trial order; nil when the cell measured a fixed load.
	Capacity []*results.Capacity
	// Slowest are the cell's slowest requests over all its trials, by
	// name (each trial's Load.Exemplars merged); nil when none were kept.
	Slowest  *results.Exemplars
	Warnings []string
	// Incomplete marks a cell of an interrupted study that ran fewer
	// trials than planned: no comparison with it is decided.
	Incomplete bool

	// InBrowser marks a cell whose requests a page made (timed with
	// performance.now()): its req/s moves in whole batches.
	InBrowser bool
}

// Build summarizes r. It never fails: missing data becomes warnings.
func Build(r *results.Study) *Report {
	rep := &Report{Results: r}
	for _, w := range r.Warnings {
		// Renderers build the quick-run banner from what ran; a runner's
		// own quick note (which may not apply: a sizes-only study has no
		// trials) is not repeated.
		if !strings.HasPrefix(w, "quick run:") {
			rep.Warnings = append(rep.Warnings, w)
		}
	}
	byName := map[string]int{}
	for _, c := range r.Cells {
		// A study's links axis is one more grouping dimension: cells
		// compare with their baseline on the same link only.
		name := GroupName(c)
		i, ok := byName[name]
		if !ok {
			i = len(rep.Groups)
			byName[name] = i
			rep.Groups = append(rep.Groups, Group{Name: name, Link: c.Link})
		}
		rep.Groups[i].Cells = append(rep.Groups[i].Cells, summarizeCell(r, c))
	}
	for i := range rep.Groups {
		g := &rep.Groups[i]
		if b := slices.IndexFunc(g.Cells, func(c CellSummary) bool { return c.Cell.Baseline }); b > 0 {
			base := g.Cells[b]
			g.Cells = slices.Insert(slices.Delete(g.Cells, b, b+1), 0, base)
		}
		g.Load = groupLoad(r, *g)
		g.Answer = answerMetric(r, *g)
	}
	if n := stats.MinCISamples(stats.Confidence); !r.SingleRun && r.HasLoad() {
		if lo, _ := trialRange(r); lo < n {
			rep.Warnings = append(rep.Warnings, fmt.Sprintf("fewer than %d trials per cell: no %v%% confidence intervals; the tables show the range of the trials instead", n, stats.Confidence*100))
		}
	}
	return rep
}

// groupLoad describes the load model of a group's trials, each distinct
// description once, in cell order.
func groupLoad(r *results.Study, g Group) string {
	var seen []string
	for _, c := range g.Cells {
		// Every trial of a cell has its cell's load options: the first says it.
		if ts := r.TrialsOf(c.Cell.ID); len(ts) > 0 {
			t := ts[0]
			d := LoadModel(t.Load.Options)
			if p := results.LoadProtocol(t.Load); p != "" {
				d = p + ", " + d
			} else if p := results.Protocol(c.Cell.Load.Target()); p != "" {
				d = p + ", " + d
			}
			if cp := t.Capacity; cp != nil {
				d = fmt.Sprintf("open-loop capacity search at %s, steps of %v after %v warm-up, to %.3g%%", strings.Join(cp.SLO, ", "),
					cp.Search.StepDuration, cp.Search.Warmup, 100*cp.Search.Precision)
				if a := results.ArrivalsText(cp.Search.Arrivals, cp.Search.Seed); a != "" {
					d += ", " + a
				}
			} else if t.Load.Options.Duration > 0 && t.Load.Options.Requests == 0 {
				d += fmt.Sprintf(", %v per %s", t.Load.Options.Duration, unitOfRun(r))
			} else if t.Load.Options.Requests > 0 {
				d += fmt.Sprintf(", %s requests per %s", formatInt(t.Load.Options.Requests), unitOfRun(r))
			}
			if !slices.Contains(seen, d) {
				seen = append(seen, d)
			}
		}
	}
	return strings.Join(seen, "; ")
}

func summarizeCell(r *results.Study, c results.Cell) CellSummary {
	cs := CellSummary{
		Cell: c, Values: map[string][]float64{}, Stats: map[string]stats.Summary{},
		Failures: map[string]int64{}, Latency: measure.NewHistogram(),
	}
	for _, t := range r.Trials {
		if t.Cell != c.ID {
			continue
		}
		if t.Error != "" || t.Load == nil {
			cs.FailedTrials++
			msg := t.Error
			if msg == "" {
				msg = "no load result"
			}
			cs.Warnings = append(cs.Warnings, fmt.Sprintf("trial %d failed: %s", t.Index, msg))
		}
		for _, ch := range t.Checks {
			cs.CheckRuns++
			if !ch.OK {
				cs.CheckFailed++
				msg := fmt.Sprintf("trial %d: check %q failed (exit %d)", t.Index, strings.Join(ch.Command, " "), ch.ExitCode)
				if out := strings.TrimSpace(ch.Output); out != "" {
					msg += ": " + lastLine(out)
				}
				cs.Warnings = append(cs.Warnings, msg)
			}
		}
		if t.UsersBefore != t.UsersAfter || t.TodosBefore != t.TodosAfter {
			cs.Warnings = append(cs.Warnings, fmt.Sprintf("trial %d: dataset changed during the run (users %d→%d, todos %d→%d): later requests saw different data",
				t.Index, t.UsersBefore, t.UsersAfter, t.TodosBefore, t.TodosAfter))
		}
	}
	trials := r.TrialsOf(c.ID)
	slices.SortFunc(trials, func(a, b results.Trial) int { return a.Index - b.Index })
	cs.Trials = len(trials)
	loadWarn := map[string]int{}
	for _, t := range trials {
		cs.InBrowser = t.Load.Stream != nil && t.Load.Stream.InBrowser
		for _, m := range Metrics {
			if v, ok := m.Value(t); ok {
				cs.Values[m.Key] = append(cs.Values[m.Key], v)
			}
		}
		cs.Requests += t.Load.Requests
		cs.Failed += t.Load.Failed
		for k, n := range t.Load.Failures {
			cs.Failures[k] += n
		}
		cs.Latency.Merge(t.Load.Latency)
		cs.RSS = append(cs.RSS, t.Server.Samples)
		for _, w := range t.Load.Warnings {
			loadWarn[w]++
		}
	}
	cs.Ops = summarizeOps(trials)
	var sets []*results.Exemplars
	n := 0
	for _, t := range trials {
		if e := t.Load.Exemplars; e != nil && len(e.Slowest) > 0 {
			sets, n = append(sets, e), max(n, len(e.Slowest))
		}
	}
	if len(sets) > 0 {
		cs.Slowest = results.MergeExemplars(n, sets...)
	}
	cs.Capacity = capacities(r, c.ID)
	cs.Incomplete = r.Stop.IncompleteCell(c.ID)
	for _, w := range slices.Sorted(maps.Keys(loadWarn)) {
		cs.Warnings = append(cs.Warnings, fmt.Sprintf("load client (%d of %d trials): %s", loadWarn[w], len(trials), w))
	}
	if cs.Failed > 0 {
		cs.Warnings = append(cs.Warnings, fmt.Sprintf("%s of %s requests failed their checks", formatInt(cs.Failed), formatInt(cs.Requests)))
	}
	for _, m := range Metrics {
		if vs, ok := cs.Values[m.Key]; ok {
			cs.Stats[m.Key] = stats.Summarize(vs)
		}
	}
	return cs
}

// Passed is the number of requests whose checks passed.
func (c CellSummary) Passed() int64 { return c.Requests - c.Failed }

// Stat returns the summary of one metric and whether the cell has it.
func (c CellSummary) Stat(key string) (stats.Summary, bool) {
	s, ok := c.Stats[key]
	return s, ok
}

// VsBaseline compares cell i of the group with the baseline (cell 0) on
// one metric. ok is false for the baseline itself or missing data.
func (g Group) VsBaseline(i int, key string) (d stats.Delta, ok bool) {
	if i == 0 || i >= len(g.Cells) {
		return stats.Delta{}, false
	}
	old, new := g.Cells[0].Values[key], g.Cells[i].Values[key]
	if len(old) == 0 || len(new) == 0 {
		return stats.Delta{}, false
	}
	return g.compare(i, old, new), true
}

// lastLine is the last line of a command's output, where the reason for
// a failure usually is, cut to a readable length.
func lastLine(s string) string {
	if i := strings.LastIndexByte(s, '\n'); i >= 0 {
		s = s[i+1:]
	}
	if len(s) > 200 {
		s = s[:200] + "…"
	}
	return s
}

// unitOfRun is what a study's load options are given per: a trial, a
// single run, or a test merged from segments.
func unitOfRun(r *results.Study) string {
	switch {
	case mergedFrom(r) != "":
		return "test"
	case r.SingleRun:
		return "run"
	}
	return "trial"
}
