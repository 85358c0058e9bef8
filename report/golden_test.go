package report_test

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"testing"

	"github.com/wirebench/wirebench/report"
	"github.com/wirebench/wirebench/report/reporttest"
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
	{"sizes", reporttest.Options{SizesOnly: true}},
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
