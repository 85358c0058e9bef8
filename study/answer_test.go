package study

import (
	"slices"
	"testing"

	"github.com/wirebench/wirebench/report"
)

// TestBuiltinAnswers: every built-in study with load trials names the
// metric its question is asked in, one the report knows, and a yes/no
// question's cell exists; the formats study asks about cost, so it
// answers in server CPU per request.
func TestBuiltinAnswers(t *testing.T) {
	for _, name := range Names() {
		def, err := Lookup(name)
		if err != nil {
			t.Fatal(err)
		}
		if len(def.Cells) == 0 {
			continue // no load trials (payload-size) or its own report (bulk-upsert)
		}
		a := def.Answer
		if _, ok := report.MetricByKey(a.Metric); !ok {
			t.Errorf("study %s: answer metric %q is not a report metric", name, a.Metric)
		}
		if a.Cell != "" && !slices.ContainsFunc(def.Cells, func(c Cell) bool { return c.Label == a.Cell }) {
			t.Errorf("study %s: answer cell %q is not a cell", name, a.Cell)
		}
	}
	if def, _ := Lookup("formats"); def.Answer.Metric != "server_cpu_per_req" || def.Answer.Cell != "toon" {
		t.Errorf("formats answers with %+v, want server CPU per request of toon", def.Answer)
	}
}
