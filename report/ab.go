package report

import (
	"bufio"
	"fmt"
	"io"
	"slices"
	"text/tabwriter"

	"github.com/wirebench/wirebench/results"
	"github.com/wirebench/wirebench/results/stats"
)

// ABMetrics are the metrics an A/B comparison of two result files shows:
// throughput, the typical and the tail latency, and the costs.
var ABMetrics = []string{"capacity", "capacity_per_core", "rps", "lat_p50", "lat_p99", "server_cpu_per_req", "peak_rss", "recv_body_per_req", "recv_wire_per_req"}

// ABRow compares one cell on one metric across two result files.
type ABRow struct {
	Cell  string
	Delta stats.Delta
}

// ABTable is every cell present in both files, for one metric.
type ABTable struct {
	Metric Metric
	Rows   []ABRow
}

// AB compares two studies benchstat-style: for every cell ID present in
// both, each of ABMetrics. It also returns why the comparison may mislead
// (different machines, cells in only one file, too few trials).
func AB(old, new *results.Study) ([]ABTable, []string) {
	oldRep, newRep := Build(old), Build(new)
	oldCells, newCells := cellIndex(oldRep), cellIndex(newRep)
	var warnings []string
	var ids []string
	for _, c := range old.Cells {
		if _, ok := newCells[c.ID]; ok {
			ids = append(ids, c.ID)
		} else {
			warnings = append(warnings, fmt.Sprintf("cell %q is only in the old file", c.ID))
		}
	}
	for _, c := range new.Cells {
		if _, ok := oldCells[c.ID]; !ok {
			warnings = append(warnings, fmt.Sprintf("cell %q is only in the new file", c.ID))
		}
	}
	var tables []ABTable
	seen := map[string]bool{}
	for _, key := range ABMetrics {
		m, _ := MetricByKey(key)
		t := ABTable{Metric: m}
		for _, id := range ids {
			o, n := oldCells[id].Values[key], newCells[id].Values[key]
			if len(o) == 0 || len(n) == 0 {
				continue
			}
			d := stats.Compare(o, n)
			if oldCells[id].Incomplete || newCells[id].Incomplete {
				d = cutDelta(d) // an interrupted study's cell missed trials: "?"
			}
			for _, w := range append(slices.Clone(d.Warnings), append(d.Old.Warnings, d.New.Warnings...)...) {
				if !seen[w] {
					seen[w] = true
					warnings = append(warnings, w)
				}
			}
			t.Rows = append(t.Rows, ABRow{Cell: id, Delta: d})
		}
		if len(t.Rows) > 0 {
			tables = append(tables, t)
		}
	}
	return tables, warnings
}

// runName is a single run's cell label (its file name), or alt when the
// label would not tell the two apart.
func runName(r *results.Study, alt string) string {
	if len(r.Cells) == 1 && r.Cells[0].Label != "" && r.Cells[0].Label != r.Cells[0].ID {
		return r.Cells[0].Label
	}
	return alt
}

func cellIndex(rep *Report) map[string]CellSummary {
	m := map[string]CellSummary{}
	for _, g := range rep.Groups {
		for _, c := range g.Cells {
			m[c.Cell.ID] = c
		}
	}
	return m
}

// WriteAB prints the comparison as aligned text, one table per metric:
// old and new medians with their spread, and the change with its p-value,
// or "~" when the difference is not significant.
//
// Two single load runs are set side by side instead (writeRunCompare):
// every metric and its change, with no significance claimed.
func WriteAB(w io.Writer, old, new *results.Study) error {
	if o, ok := singleRun(old); ok {
		if n, ok := singleRun(new); ok {
			on, nn := runName(old, "old"), runName(new, "new")
			if on == nn {
				on, nn = "old", "new"
			}
			if err := writeCapacityCompare(w, on, nn, old, new); err != nil {
				return err
			}
			return writeRunCompare(w, on, nn, o, n)
		}
	}
	tables, warnings := AB(old, new)
	bw := bufio.NewWriter(w)
	nc := results.NotComparable(old.Env, new.Env)
	if nc != "" {
		fmt.Fprintf(bw, "%s\n\n", nc)
	}
	for _, side := range []struct {
		name string
		r    *results.Study
	}{{"old", old}, {"new", new}} {
		if l := interruptedLine(side.r.Stop); l != "" {
			fmt.Fprintf(bw, "%s: %s\n\n", side.name, l)
		}
	}
	tw := tabwriter.NewWriter(bw, 0, 4, 2, ' ', 0)
	for i, t := range tables {
		if i > 0 {
			fmt.Fprintln(tw)
		}
		fmt.Fprintf(tw, "%s\told\tnew\tvs old\n", t.Metric.Label)
		for _, r := range t.Rows {
			vs := r.Delta.String()
			if nc != "" {
				vs = "not comparable"
			}
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", r.Cell,
				formatSummary(t.Metric.Unit, r.Delta.Old), formatSummary(t.Metric.Unit, r.Delta.New), vs)
		}
	}
	if err := tw.Flush(); err != nil {
		return fmt.Errorf("report: write comparison: %w", err)
	}
	if len(tables) == 0 {
		fmt.Fprintln(bw, "no cells in common")
	}
	if len(warnings) > 0 {
		fmt.Fprintln(bw, "\nwarnings:")
		for _, w := range warnings {
			fmt.Fprintf(bw, "  %s\n", w)
		}
	}
	fmt.Fprintf(bw, "\nmedians ± the larger side of the %v%% CI ([lo–hi]: the range of the trials when too few for one); "+
		"vs old: Mann-Whitney U test at α = %v, ~ = enough trials, no significant difference, "+
		"? = too few trials to decide (need %d+ per side)\n", stats.Confidence*100, stats.Alpha, minTrials())
	if err := bw.Flush(); err != nil {
		return fmt.Errorf("report: write comparison: %w", err)
	}
	return nil
}
