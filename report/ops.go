package report

import (
	"slices"

	"github.com/wirebench/wirebench/results"
	"github.com/wirebench/wirebench/results/stats"
)

// Scenarios that mix operations (list, create, get, update, delete) hide
// in one latency histogram the operation that differs: gRPC may win on
// small gets and lose on lists. So each operation is summarized on its
// own, per trial and then across trials, exactly like the cell's overall
// latency.

// opMetrics are the per-operation latencies shown; the first is the one
// compared with the baseline.
var opMetrics = []struct {
	Key, Name string
	Q         float64
}{{"p50", "p50", 0.50}, {"p99", "p99", 0.99}}

// OpSummary is one operation of a cell over its trials.
type OpSummary struct {
	Name             string
	Requests, Failed int64
	// Values are per-trial latency percentiles by opMetrics key (ns), in
	// trial order; Stats summarize them.
	Values map[string][]float64
	Stats  map[string]stats.Summary
}

// summarizeOps gathers each operation's per-trial percentiles, operations
// in order of first appearance. Trials where an operation got no response
// contribute nothing to it.
func summarizeOps(trials []results.Trial) []OpSummary {
	var ops []OpSummary
	index := map[string]int{}
	for _, t := range trials {
		for _, o := range t.Load.Ops {
			i, ok := index[o.Name]
			if !ok {
				i = len(ops)
				index[o.Name] = i
				ops = append(ops, OpSummary{Name: o.Name, Values: map[string][]float64{}, Stats: map[string]stats.Summary{}})
			}
			addOp(&ops[i], o)
		}
	}
	for i := range ops {
		for k, vs := range ops[i].Values {
			ops[i].Stats[k] = stats.Summarize(vs)
		}
	}
	return ops
}

func addOp(s *OpSummary, o results.Op) {
	s.Requests += o.Requests
	s.Failed += o.Failed
	if o.Latency == nil || o.Latency.Count() == 0 {
		return
	}
	for _, m := range opMetrics {
		s.Values[m.Key] = append(s.Values[m.Key], float64(o.Latency.Quantile(m.Q)))
	}
}

// Op returns the cell's summary of the named operation.
func (c CellSummary) Op(name string) (OpSummary, bool) {
	i := slices.IndexFunc(c.Ops, func(o OpSummary) bool { return o.Name == name })
	if i < 0 {
		return OpSummary{}, false
	}
	return c.Ops[i], true
}

// opNames lists the operations of a group in order of first appearance.
func opNames(g Group) []string {
	var names []string
	for _, c := range g.Cells {
		for _, o := range c.Ops {
			if !slices.Contains(names, o.Name) {
				names = append(names, o.Name)
			}
		}
	}
	return names
}

// hasOpTable: a per-operation table only adds to the group's table when
// the scenario mixes operations; with one, it would repeat it.
func hasOpTable(g Group) bool { return len(opNames(g)) > 1 }

// opTable is one group's per-operation table: a row per operation; per
// cell its median p50 and p99 across trials with their spread, and for
// each cell but the baseline the change of p50 vs the baseline with its
// Mann-Whitney p-value, "~" when not significant.
func opTable(g Group) table {
	t := table{Header: []string{"operation"}, Short: []string{"operation"}, Sig: map[[2]int]int{}}
	t.Groups = []headerGroup{{"", 1}}
	base := g.Cells[0].Cell.Label
	cmpKey := opMetrics[0].Key
	for i, c := range g.Cells {
		span := 0
		for _, m := range opMetrics {
			t.Header = append(t.Header, c.Cell.Label+" "+m.Name)
			t.Short = append(t.Short, m.Name)
			span++
		}
		if i > 0 {
			t.Header = append(t.Header, c.Cell.Label+" "+cmpKey+" vs "+base)
			t.Short = append(t.Short, cmpKey+" vs base")
			span++
		}
		t.Groups = append(t.Groups, headerGroup{c.Cell.Label, span})
	}
	for r, name := range opNames(g) {
		row := []string{name}
		baseOp, hasBase := g.Cells[0].Op(name)
		for i, c := range g.Cells {
			op, ok := c.Op(name)
			for _, m := range opMetrics {
				if s, has := op.Stats[m.Key]; ok && has {
					row = append(row, formatSummary(UnitDuration, s))
				} else {
					row = append(row, "—")
				}
			}
			if i == 0 {
				continue
			}
			old, new := baseOp.Values[cmpKey], op.Values[cmpKey]
			if !hasBase || !ok || len(old) == 0 || len(new) == 0 {
				row = append(row, "—")
				continue
			}
			d := g.compare(i, old, new)
			if d.Significant() && d.Old.Center != d.New.Center {
				t.Sig[[2]int{r, len(row)}] = map[bool]int{true: 1, false: -1}[d.New.Center < d.Old.Center]
			}
			row = append(row, formatVs(d))
		}
		t.Rows = append(t.Rows, row)
	}
	return t
}

// opNote explains the per-operation tables.
func opNote(single bool) string {
	if single {
		return "Per operation: each operation's requests, failed checks and latency percentiles from the run's histograms."
	}
	return "Per operation: each operation's latency percentiles per trial, then the median across trials with its spread as above; " +
		"\"p50 vs\" compares the per-trial p50s with the baseline's (Mann-Whitney U test): ~ when enough trials found no significant difference, ? when too few trials to decide."
}

// groupOpTable is the per-operation table of a group: for a single run
// (one cell, one trial) each operation's requests and failures beside its
// percentiles, since there is nothing to compare; else opTable.
func groupOpTable(g Group, single bool) table {
	if !single || len(g.Cells) != 1 {
		return opTable(g)
	}
	t := table{Header: []string{"operation", "requests", "failed", "p50", "p99"}}
	for _, o := range g.Cells[0].Ops {
		row := []string{o.Name, formatInt(o.Requests), formatInt(o.Failed)}
		for _, m := range opMetrics {
			if s, ok := o.Stats[m.Key]; ok {
				row = append(row, formatSummary(UnitDuration, s))
			} else {
				row = append(row, "—")
			}
		}
		t.Rows = append(t.Rows, row)
	}
	return t
}
