package report

import (
	"fmt"

	"github.com/wirebench/wirebench/results/stats"
)

// mainMetrics are the columns of a group's main table: what a reader
// compares first. Every other metric is in the "all metrics" table behind
// an expandable section, so the main table fits a page without scrolling.
var mainMetrics = []string{"rps", "lat_p50", "lat_p99", "recv_wire_per_req", "server_cpu_per_req", "peak_rss"}

// mainNames are the main table's shorter column names.
var mainNames = map[string]string{"recv_wire_per_req": "bytes/req"}

// mainTable is one group's narrow table: per cell the group's answer
// metric (Group.Answer: req/s unless the study asks in another unit) with
// its change against the baseline, then the other main metrics — req/s,
// p50, p99, bytes per request, server CPU per request, peak RSS — and
// checks. Server columns are left out when no cell
// sampled a server process (a plain load run, a server given by URL).
func mainTable(g Group) table {
	t := table{Header: []string{"cell"}, Sig: map[[2]int]int{}}
	head := g.answerKey()
	keys := []string{head} // the question's unit leads, with the comparison beside it
	switch {
	case head == capacityMetric && groupHas(g, perCoreKey):
		keys = append(keys, perCoreKey)
	case head == perCoreKey:
		keys = append(keys, capacityMetric)
	}
	for _, k := range mainMetrics {
		if k == head || (k == "server_cpu_per_req" || k == "peak_rss") && !groupHas(g, k) {
			continue
		}
		keys = append(keys, k)
	}
	compare := len(g.Cells) > 1
	for _, k := range keys {
		m, _ := MetricByKey(k)
		name := m.Label
		if n, ok := mainNames[k]; ok {
			name = n
		}
		t.Header = append(t.Header, name)
		if k == head && compare {
			t.Header = append(t.Header, "vs baseline")
		}
	}
	t.Header = append(t.Header, "checks")
	for i, c := range g.Cells {
		row := []string{c.Cell.Label}
		for _, k := range keys {
			m, _ := MetricByKey(k)
			if s, ok := c.Stat(k); ok {
				row = append(row, formatSummary(m.Unit, s))
			} else {
				row = append(row, "—")
			}
			if k != head || !compare {
				continue
			}
			d, ok := g.VsBaseline(i, k)
			switch {
			case i == 0:
				row = append(row, "baseline")
			case !ok:
				row = append(row, "—")
			default:
				v, _ := judge(d, "", m.HigherIsBetter)
				switch v {
				case Better:
					t.Sig[[2]int{i, len(row)}] = 1
				case Worse:
					t.Sig[[2]int{i, len(row)}] = -1
				}
				row = append(row, formatVsMain(v, d))
			}
		}
		row = append(row, formatChecks(c))
		t.Rows = append(t.Rows, row)
	}
	return t
}

// formatVsMain prints a comparison for the main table: "+12.3% (p=0.002)",
// "~ (p=0.420)", or "? +12.3% (n=2+2)" when too few trials to decide.
func formatVsMain(v Verdict, d stats.Delta) string {
	switch v {
	case Undecided:
		return fmt.Sprintf("? %s (n=%d+%d)", signedPct(d.Pct()), d.Old.N, d.New.N)
	case Same:
		return fmt.Sprintf("~ (p=%.3f)", d.P)
	case NoData:
		return "—"
	}
	return fmt.Sprintf("%s (p=%.3f)", signedPct(d.Pct()), d.P)
}

// groupHas reports whether any cell of g has the metric.
func groupHas(g Group, key string) bool {
	for _, c := range g.Cells {
		if _, ok := c.Stat(key); ok {
			return true
		}
	}
	return false
}

// minTrials is the fewest trials per cell with which a comparison can
// be significant at Alpha.
func minTrials() int { return stats.MinUTestSamples(stats.Alpha) }
