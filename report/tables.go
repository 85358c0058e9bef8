package report

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/wirebench/wirebench/results"
)

// table is a rendered-to-text table shared by the Markdown and HTML
// renderers, so both show exactly the same numbers.
type table struct {
	Header []string
	Rows   [][]string
	// Sig marks cells holding a significant comparison (HTML colours them).
	Sig map[[2]int]int // (row, col) → +1 better, -1 worse

	// Optional, for HTML only (Markdown has one header row, so Header
	// must make sense alone): Groups spans a row above the header over
	// runs of columns, Short replaces Header under the groups, and
	// RowGroupStart marks rows that begin a group of rows.
	Groups        []headerGroup
	Short         []string
	RowGroupStart map[int]bool
	// LabelCols is how many leading columns hold names, not numbers
	// (HTML aligns them left); 0 means 1.
	LabelCols int
}

// headerGroup is one cell of a column-group header row.
type headerGroup struct {
	Name string
	Span int
}

// vsMetrics are the metrics that get a "vs baseline" column, after the
// metric's own column: throughput and the tail.
var vsMetrics = map[string]bool{"rps": true, "lat_p99": true}

// groupTable is one group's table of all metrics in the seeds' style:
// one row per cell, each number a median over trials with its spread.
// Metrics no cell has (server columns of a plain load run) are left out,
// and so are comparisons when the group has one cell.
func groupTable(g Group) table {
	t := table{Header: []string{"cell"}, Sig: map[[2]int]int{}}
	compare := len(g.Cells) > 1
	var ms []Metric
	for _, m := range Metrics {
		if groupHas(g, m.Key) {
			ms = append(ms, m)
		}
	}
	for _, m := range ms {
		t.Header = append(t.Header, m.Label)
		if g.compares(m.Key) && compare {
			t.Header = append(t.Header, m.Label+" vs base")
		}
		if m.Key == "lat_max" {
			t.Header = append(t.Header, "checks")
		}
	}
	for i, c := range g.Cells {
		row := []string{c.Cell.Label}
		for _, m := range ms {
			if s, ok := c.Stat(m.Key); ok {
				row = append(row, formatSummary(m.Unit, s))
			} else {
				row = append(row, "—")
			}
			if g.compares(m.Key) && compare {
				switch d, ok := g.VsBaseline(i, m.Key); {
				case i == 0:
					row = append(row, "baseline")
				case !ok:
					row = append(row, "—")
				default:
					if d.Significant() && d.Old.Center != d.New.Center {
						better := (d.New.Center > d.Old.Center) == m.HigherIsBetter
						t.Sig[[2]int{i, len(row)}] = map[bool]int{true: 1, false: -1}[better]
					}
					row = append(row, formatVs(d))
				}
			}
			if m.Key == "lat_max" {
				row = append(row, formatChecks(c))
			}
		}
		t.Rows = append(t.Rows, row)
	}
	return t
}

// allWarnings lists every caveat of the report, each prefixed with its
// cell, in report order.
func allWarnings(rep *Report) []string {
	out := slices.Clone(rep.Warnings)
	for _, g := range rep.Groups {
		for _, c := range g.Cells {
			for _, w := range c.Warnings {
				out = append(out, c.Cell.ID+": "+w)
			}
		}
	}
	return out
}

// envRows describes the machine (fairness rule 8) as label/value pairs.
func envRows(r *results.Study) [][2]string {
	e := r.Env
	rows := [][2]string{
		{"CPU", fmt.Sprintf("%s × %d", orDash(e.CPUModel), e.NumCPU)},
		{"pinning", pinning(r)},
		{"kernel", orDash(e.Kernel)},
		{"Go", strings.TrimSpace(fmt.Sprintf("%s %s/%s", e.GoVersion, e.GOOS, e.GOARCH))},
	}
	commit := orDash(e.GitCommit)
	if len(commit) > 12 {
		commit = commit[:12]
	}
	if e.GitDirty {
		commit += " (dirty tree)"
	}
	rows = append(rows, [2]string{"commit", commit})
	return rows
}

// pinning reports the CPU sets of the first trial, or that nothing was
// pinned (then client and server competed for CPUs: fairness rule 4).
func pinning(r *results.Study) string {
	if r.PayloadLab != nil {
		return "none (one process: the codecs run in the lab itself, one goroutine)"
	}
	for _, t := range r.Trials {
		if len(t.ServerCPUs) > 0 || len(t.ClientCPUs) > 0 {
			return fmt.Sprintf("server CPUs %s, client CPUs %s", results.CPUList(t.ServerCPUs), results.CPUList(t.ClientCPUs))
		}
	}
	return "none (client and server share CPUs)"
}

func orDash(s string) string {
	if s == "" {
		return "—"
	}
	return s
}

// trialsLine says what was run, from the data alone: "2 trials per
// cell of 1.5s after 500ms warm-up, interleaved"; "one load run"; "sizes
// only, no load trials".
func trialsLine(r *results.Study) string {
	if r.SingleRun {
		return "one load run"
	}
	if !r.HasLoad() {
		return "sizes only, no load trials"
	}
	lo, hi := trialRange(r)
	n := fmt.Sprintf("%d", hi)
	if lo != hi {
		n = fmt.Sprintf("%d–%d", lo, hi)
	}
	word := "trials"
	if hi == 1 {
		word = "trial"
	}
	line := fmt.Sprintf("%s %s per cell", n, word)
	if slices.ContainsFunc(r.Trials, func(t results.Trial) bool { return t.Capacity != nil }) {
		line += ", each a capacity search" // its steps have their own lengths and warm-ups
		if hi > 1 && len(r.Cells) > 1 {
			line += ", interleaved"
		}
		return line
	}
	var durs []time.Duration
	for _, t := range r.Trials {
		if t.Load != nil && t.Load.Options.Duration > 0 && !slices.Contains(durs, t.Load.Options.Duration) {
			durs = append(durs, t.Load.Options.Duration)
		}
	}
	if len(durs) == 1 {
		line += fmt.Sprintf(" of %v", durs[0])
	}
	if w := r.Options.Warmup; w != "" && w != "0s" {
		line += " after " + w + " warm-up"
	}
	if hi > 1 && len(r.Cells) > 1 {
		line += ", interleaved"
	}
	return line
}

// trialRange is the fewest and most successful trials of any cell.
func trialRange(r *results.Study) (lo, hi int) {
	lo = -1
	for _, c := range r.Cells {
		n := len(r.TrialsOf(c.ID))
		if lo < 0 || n < lo {
			lo = n
		}
		hi = max(hi, n)
	}
	return max(lo, 0), hi
}
