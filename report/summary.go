package report

import (
	"github.com/wirebench/wirebench/results/stats"

	"fmt"
	"maps"
	"slices"

	"github.com/wirebench/wirebench/measure"
)

// Report is a study's results digested for rendering: per cell, every
// metric summarized across trials; per group, comparisons against the
// group's baseline. All renderers (Markdown, CSV, HTML) draw from it, so
// they cannot disagree.
type Report struct {
	Results  *Results
	Groups   []Group
	Warnings []string // run-wide caveats, quick-run first
}

// Group is the cells compared with one another; Cells[0] is the baseline.
type Group struct {
	Name  string
	Cells []CellSummary
}

// CellSummary is one cell over its trials.
type CellSummary struct {
	Cell         Cell
	Trials       int // trials with a load result
	FailedTrials int // trials that ended in an error
	// Values are the per-trial values of each metric (by Metric.Key), in
	// trial-index order; Stats their summaries.
	Values map[string][]float64
	Stats  map[string]Summary
	// Checks: every response is checked (fairness rule 2).
	Requests, Failed int64
	Failures         map[string]int64
	// Latency is every trial's latency histogram merged, for percentile
	// curves; tables use per-trial percentiles instead.
	Latency *measure.Histogram
	// RSS holds each trial's server samples, for memory-over-time plots.
	RSS [][]ProcSample
	// Ops are the scenario's operations, each summarized on its own.
	Ops      []OpSummary
	Warnings []string
}

// Build summarizes r. It never fails: missing data becomes warnings.
func Build(r *Results) *Report {
	rep := &Report{Results: r}
	if r.Quick {
		rep.Warnings = append(rep.Warnings, "quick run: fewer and shorter trials than a full study; treat every number as a smoke test, not a result")
	}
	rep.Warnings = append(rep.Warnings, r.Warnings...)
	byName := map[string]int{}
	for _, c := range r.Cells {
		i, ok := byName[c.Group]
		if !ok {
			i = len(rep.Groups)
			byName[c.Group] = i
			rep.Groups = append(rep.Groups, Group{Name: c.Group})
		}
		rep.Groups[i].Cells = append(rep.Groups[i].Cells, summarizeCell(r, c))
	}
	return rep
}

func summarizeCell(r *Results, c Cell) CellSummary {
	cs := CellSummary{
		Cell: c, Values: map[string][]float64{}, Stats: map[string]Summary{},
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
		if t.UsersBefore != t.UsersAfter || t.TodosBefore != t.TodosAfter {
			cs.Warnings = append(cs.Warnings, fmt.Sprintf("trial %d: dataset changed during the run (users %d→%d, todos %d→%d): later requests saw different data",
				t.Index, t.UsersBefore, t.UsersAfter, t.TodosBefore, t.TodosAfter))
		}
	}
	trials := r.TrialsOf(c.ID)
	slices.SortFunc(trials, func(a, b Trial) int { return a.Index - b.Index })
	cs.Trials = len(trials)
	loadWarn := map[string]int{}
	for _, t := range trials {
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
	for _, w := range slices.Sorted(maps.Keys(loadWarn)) {
		cs.Warnings = append(cs.Warnings, fmt.Sprintf("load client (%d of %d trials): %s", loadWarn[w], len(trials), w))
	}
	if cs.Failed > 0 {
		cs.Warnings = append(cs.Warnings, fmt.Sprintf("%s of %s requests failed their checks", formatInt(cs.Failed), formatInt(cs.Requests)))
	}
	for _, m := range Metrics {
		if vs, ok := cs.Values[m.Key]; ok {
			cs.Stats[m.Key] = Summarize(vs)
		}
	}
	if n := stats.MinCISamples(Confidence); cs.Trials < n {
		cs.Warnings = append(cs.Warnings, fmt.Sprintf("%d trials: no %v%% confidence intervals (need >= %d); the tables show the range of the trials instead", cs.Trials, Confidence*100, n))
	}
	return cs
}

// Passed is the number of requests whose checks passed.
func (c CellSummary) Passed() int64 { return c.Requests - c.Failed }

// Stat returns the summary of one metric and whether the cell has it.
func (c CellSummary) Stat(key string) (Summary, bool) {
	s, ok := c.Stats[key]
	return s, ok
}

// VsBaseline compares cell i of the group with the baseline (cell 0) on
// one metric. ok is false for the baseline itself or missing data.
func (g Group) VsBaseline(i int, key string) (d Delta, ok bool) {
	if i == 0 || i >= len(g.Cells) {
		return Delta{}, false
	}
	old, new := g.Cells[0].Values[key], g.Cells[i].Values[key]
	if len(old) == 0 || len(new) == 0 {
		return Delta{}, false
	}
	return Compare(old, new), true
}

// Winner names the cell with the best median on a metric, but only when
// it is significantly better than the runner-up; otherwise ok is false
// and no winner may be claimed.
func (g Group) Winner(key string) (best, runnerUp int, d Delta, ok bool) {
	m, found := MetricByKey(key)
	if !found || len(g.Cells) < 2 {
		return 0, 0, Delta{}, false
	}
	order := make([]int, 0, len(g.Cells))
	for i, c := range g.Cells {
		if _, has := c.Stats[key]; has {
			order = append(order, i)
		}
	}
	if len(order) < 2 {
		return 0, 0, Delta{}, false
	}
	slices.SortStableFunc(order, func(a, b int) int {
		x, y := g.Cells[a].Stats[key].Center, g.Cells[b].Stats[key].Center
		if m.HigherIsBetter {
			x, y = y, x
		}
		switch {
		case x < y:
			return -1
		case x > y:
			return 1
		}
		return 0
	})
	best, runnerUp = order[0], order[1]
	d = Compare(g.Cells[runnerUp].Values[key], g.Cells[best].Values[key])
	return best, runnerUp, d, d.Significant() && d.Old.Center != d.New.Center
}
