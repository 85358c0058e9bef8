package report_test

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/wirebench/wirebench/report"
	"github.com/wirebench/wirebench/report/reporttest"
	"github.com/wirebench/wirebench/results"
)

var update = flag.Bool("update", false, "rewrite testdata/*.golden")

// golden compares got with testdata/name, or rewrites it with -update.
func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test ./report -update to create it)", err)
	}
	if !bytes.Equal(got, want) {
		gotPath := filepath.Join(t.TempDir(), name)
		os.WriteFile(gotPath, got, 0o644)
		t.Errorf("%s differs from the golden file; got is in %s (diff it; -update to accept)", name, gotPath)
	}
}

// renderCases are the synthetic studies every renderer is checked on.
var renderCases = []struct {
	name string
	opt  reporttest.Options
}{
	{"full", reporttest.Options{Faults: true}},
	{"quick", reporttest.Options{Trials: 2, Quick: true}},
	// A sizes-only study run with --quick: no trial banner or warnings.
	{"sizes", reporttest.Options{SizesOnly: true, Quick: true}},
	// A yes/no question asked in server CPU per request, with an
	// in-browser group, which answers in latency.
	{"answer", reporttest.Options{Question: "Is TOON cheaper to serve than JSON?",
		Answer: results.Answer{Metric: "server_cpu_per_req", Cell: "toon"}, Browser: true}},
}

func TestGoldenMarkdown(t *testing.T) {
	for _, tc := range renderCases {
		t.Run(tc.name, func(t *testing.T) {
			var buf bytes.Buffer
			if err := report.WriteMarkdown(&buf, report.Build(reporttest.Results(tc.opt))); err != nil {
				t.Fatal(err)
			}
			golden(t, tc.name+".md.golden", buf.Bytes())
		})
	}
}

func TestGoldenCSV(t *testing.T) {
	for _, tc := range renderCases {
		t.Run(tc.name, func(t *testing.T) {
			var buf bytes.Buffer
			if err := report.WriteCSV(&buf, report.Build(reporttest.Results(tc.opt))); err != nil {
				t.Fatal(err)
			}
			golden(t, tc.name+".csv.golden", buf.Bytes())
		})
	}
}

// A sizes-only study says nothing about trials, cells or quick runs: its
// report states what it measured and nothing that does not apply.
func TestSizesOnlyReportSaysNoTrials(t *testing.T) {
	r := reporttest.Results(reporttest.Options{SizesOnly: true, Quick: true})
	rep := report.Build(r)
	var md, html bytes.Buffer
	if err := report.WriteMarkdown(&md, rep); err != nil {
		t.Fatal(err)
	}
	if err := report.WriteHTML(&html, rep); err != nil {
		t.Fatal(err)
	}
	for name, out := range map[string]string{"md": md.String(), "html": html.String()} {
		for _, bad := range []string{"Quick run", "quick run", "trials of", "0 cells", "Warnings", "confidence", "Question"} {
			if strings.Contains(out, bad) {
				t.Errorf("%s: sizes-only report says %q", name, bad)
			}
		}
		if !strings.Contains(out, "sizes only, no load trials") {
			t.Errorf("%s: report does not say it measured sizes only", name)
		}
	}
}
