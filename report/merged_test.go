package report

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/wirebench/wirebench/results"
)

// A file wirebench merge made from a test's segments is one test, not a
// run of its own: the report says what it was merged from (Markdown and
// HTML), and its load line counts requests per test; a file of one run
// still reads "a single run".
func TestMergedRunSaysSo(t *testing.T) {
	tr := opTrial("crud", 0, map[string]time.Duration{"get": time.Millisecond})
	tr.Load.Options.Requests = 50
	render := func(l *results.Load) string {
		rep := Build(results.FromLoad(l))
		var md, html bytes.Buffer
		if err := WriteMarkdown(&md, rep); err != nil {
			t.Fatal(err)
		}
		if err := WriteHTML(&html, rep); err != nil {
			t.Fatal(err)
		}
		return md.String() + "\n----\n" + html.String()
	}
	one := render(tr.Load)
	for _, want := range []string{"Load run, ", "A single run: no spread", "50 requests per run"} {
		if strings.Count(one, want) < 2 {
			t.Errorf("one run: lacks %q (in both reports)\n%s", want, one)
		}
	}
	tr.Load.Segments = []string{"1/2", "2/2"}
	merged := render(tr.Load)
	for _, want := range []string{"Load test merged from 2 segments (1/2, 2/2)", "One test merged from 2 segments (1/2, 2/2): no spread across repeated runs", "50 requests per test"} {
		if strings.Count(merged, want) < 2 {
			t.Errorf("merged: %q not in both reports\n%s", want, merged)
		}
	}
	if strings.Contains(merged, "A single run") || strings.Contains(merged, "requests per run") {
		t.Errorf("merged file still reads as a single run\n%s", merged)
	}
	tr.Load.Segments = []string{"1/1", "1/1", "1/1"} // merge --unchecked of three runs
	if rep := render(tr.Load); !strings.Contains(rep, "merged from 3 runs (1/1, 1/1, 1/1)") {
		t.Errorf("unchecked merge of runs: not named\n%s", rep)
	}
}
