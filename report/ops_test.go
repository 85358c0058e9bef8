package report

import (
	"slices"
	"testing"
	"time"

	"github.com/wirebench/wirebench/measure"
	"github.com/wirebench/wirebench/results"
)

func opTrial(cell string, index int, ops map[string]time.Duration) results.Trial {
	res := &results.Load{Latency: measure.NewHistogram()}
	for _, name := range []string{"list", "get"} {
		d, ok := ops[name]
		if !ok {
			continue
		}
		h := measure.NewHistogram()
		h.Record(d)
		res.Ops = append(res.Ops, results.Op{Name: name, Requests: 1, Latency: h})
	}
	return results.Trial{Cell: cell, Index: index, Load: res}
}

// TestOpTable: a table only for mixed scenarios, a dash for an operation
// a cell lacks, and the p50 comparison against the first cell.
func TestOpTable(t *testing.T) {
	ms := time.Millisecond
	tests := []struct {
		name   string
		a, b   map[string]time.Duration
		table  bool
		getRow []string // the row of "get", when a table is made
	}{
		{"no ops", nil, nil, false, nil},
		{"one op", map[string]time.Duration{"get": ms}, map[string]time.Duration{"get": 2 * ms}, false, nil},
		{"mixed", map[string]time.Duration{"list": 4 * ms, "get": ms}, map[string]time.Duration{"list": 4 * ms, "get": 2 * ms}, true,
			[]string{"get", "1.000ms [all equal]", "1.000ms [all equal]", "2.000ms [all equal]", "2.000ms [all equal]", "? (p=0.194)"}}, // all ties: the U test's tie-corrected p
		{"missing op", map[string]time.Duration{"list": 4 * ms, "get": ms}, map[string]time.Duration{"list": 4 * ms}, true,
			[]string{"get", "1.000ms [all equal]", "1.000ms [all equal]", "—", "—", "—"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := &results.Study{Cells: []results.Cell{{ID: "g/a", Group: "g", Label: "a"}, {ID: "g/b", Group: "g", Label: "b"}}}
			for i := range 2 {
				r.Trials = append(r.Trials, opTrial("g/a", i, tt.a), opTrial("g/b", i, tt.b))
			}
			g := Build(r).Groups[0]
			if got := hasOpTable(g); got != tt.table {
				t.Fatalf("hasOpTable = %v, want %v", got, tt.table)
			}
			if !tt.table {
				return
			}
			tab := opTable(g)
			if len(tab.Header) != len(tt.getRow) {
				t.Fatalf("header %q has %d columns, want %d", tab.Header, len(tab.Header), len(tt.getRow))
			}
			if got := tab.Rows[1]; !slices.Equal(got, tt.getRow) {
				t.Errorf("get row %q, want %q", got, tt.getRow)
			}
		})
	}
}

// A single load run's per-operation table lists counts and percentiles,
// with nothing to compare.
func TestSingleRunOpTable(t *testing.T) {
	tr := opTrial("crud", 0, map[string]time.Duration{"list": 4 * time.Millisecond, "get": time.Millisecond})
	tr.Load.Ops[0].Failed = 1
	r := results.FromLoad(tr.Load)
	g := Build(r).Groups[0]
	tab := groupOpTable(g, r.SingleRun)
	want := [][]string{{"list", "1", "1", "4.001ms", "4.001ms"}, {"get", "1", "0", "1.000ms", "1.000ms"}}
	if len(tab.Rows) != len(want) {
		t.Fatalf("rows %q", tab.Rows)
	}
	for i := range want {
		if !slices.Equal(tab.Rows[i], want[i]) {
			t.Errorf("row %d = %q, want %q", i, tab.Rows[i], want[i])
		}
	}
}
