package report

import (
	"strings"
	"testing"
	"time"

	"github.com/wirebench/wirebench/measure"
	"github.com/wirebench/wirebench/results"
	"github.com/wirebench/wirebench/results/stats"
)

func TestJudge(t *testing.T) {
	base6 := []float64{100, 101, 102, 103, 104, 105}
	tests := []struct {
		name     string
		old, new []float64
		verdict  Verdict
		text     string
	}{
		// 2 vs 2 can never reach p < 0.05 (best is 1/3): undecided, with
		// the change and its range still shown.
		{"two trials", []float64{100, 102}, []float64{140, 142}, Undecided,
			"cannot decide with 2 trials (need 4+): +40% req/s [+37…+42%]"},
		{"two vs three", []float64{100, 102}, []float64{140, 141, 142}, Undecided, "cannot decide with 2+3 trials (need 4+)"},
		{"four trials, separated", []float64{100, 101, 102, 103}, []float64{140, 141, 142, 143}, Better,
			"+39% req/s [+36…+43%] (p=0.029, 4 trials)"},
		{"slower", base6, []float64{80, 81, 82, 83, 84, 85}, Worse, "-20% req/s"},
		{"same", base6, []float64{100.5, 101.5, 102.5, 103.5, 104.5, 105.5}, Same, "~ req/s, no significant difference (p="},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			v, text := judge(stats.Compare(tt.old, tt.new), "req/s", true)
			if v != tt.verdict || !strings.Contains(text, tt.text) {
				t.Errorf("judge = %v %q, want %v containing %q", v, text, tt.verdict, tt.text)
			}
		})
	}
}

// The cell marked baseline leads its group and every finding compares
// with it, whatever the order of the cells.
func TestFindingsAgainstMarkedBaseline(t *testing.T) {
	r := &results.Study{Cells: []results.Cell{
		{ID: "g/toon", Group: "g", Label: "toon"},
		{ID: "g/json", Group: "g", Label: "json", Baseline: true},
		{ID: "g/cbor", Group: "g", Label: "cbor"},
	}}
	rps := map[string][]float64{"g/toon": {140, 141, 142, 143}, "g/json": {100, 101, 102, 103}, "g/cbor": {60, 61, 62, 63}}
	for id, vs := range rps {
		for i, v := range vs {
			r.Trials = append(r.Trials, opTrialRPS(id, i, v))
		}
	}
	g := Build(r).Groups[0]
	if g.Cells[0].Cell.Label != "json" {
		t.Fatalf("baseline %q leads the group, want json", g.Cells[0].Cell.Label)
	}
	fs := g.Findings()
	if len(fs) != 2 {
		t.Fatalf("%d findings, want 2", len(fs))
	}
	want := map[string]Verdict{"toon": Better, "cbor": Worse}
	for _, f := range fs {
		if f.Baseline != "json" || f.Verdict != want[f.Cell] || !strings.HasPrefix(f.Text, f.Cell+" vs json: ") {
			t.Errorf("finding %+v", f)
		}
	}
}

// opTrialRPS is a trial of one second with rps requests.
func opTrialRPS(cell string, index int, rps float64) results.Trial {
	start := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	res := &results.Load{Latency: measure.NewHistogram(), Requests: int64(rps), Start: start, End: start.Add(time.Second)}
	return results.Trial{Cell: cell, Index: index, Load: res}
}

// A study's check commands show in the checks column, and a failed one
// becomes a warning with the end of its output.
func TestCheckCommandsShown(t *testing.T) {
	r := &results.Study{Cells: []results.Cell{{ID: "g/a", Group: "g", Label: "a"}}}
	for i := range 3 {
		tr := opTrialRPS("g/a", i, 100)
		tr.Load.Requests = 100
		tr.Checks = []results.CheckResult{{Command: []string{"sqlite3", "db", "select count(*)"}, OK: i != 1, ExitCode: 1, Output: "rows: 99\nwant 100"}}
		r.Trials = append(r.Trials, tr)
	}
	c := Build(r).Groups[0].Cells[0]
	if got := formatChecks(c); got != "300 (100% passed); check 1 of 3 failed" {
		t.Errorf("checks = %q", got)
	}
	want := `trial 1: check "sqlite3 db select count(*)" failed (exit 1): want 100`
	if !slicesContains(c.Warnings, want) {
		t.Errorf("warnings %q lack %q", c.Warnings, want)
	}
}

func slicesContains(ss []string, s string) bool {
	for _, x := range ss {
		if x == s {
			return true
		}
	}
	return false
}
