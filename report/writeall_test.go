package report_test

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/wirebench/wirebench/report"
	"github.com/wirebench/wirebench/report/reporttest"
	"github.com/wirebench/wirebench/results"
)

func TestWriteAll(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "results", "synthetic-1")
	r := reporttest.Results(reporttest.Options{Faults: true})
	if err := report.WriteAll(dir, r); err != nil {
		t.Fatal(err)
	}
	files := []string{"results.json", "report.md", "report.csv", "report.html"}
	for _, name := range files {
		b, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil || len(b) == 0 {
			t.Errorf("%s: %v (%d bytes)", name, err, len(b))
		}
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != len(files) {
		t.Errorf("dir holds %d files, want %d (no temporaries left)", len(entries), len(files))
	}
	f, err := os.Open(filepath.Join(dir, "results.json"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	back, err := results.Read(f)
	if err != nil {
		t.Fatal(err)
	}
	var a, b bytes.Buffer
	report.WriteMarkdown(&a, report.Build(r))
	report.WriteMarkdown(&b, report.Build(back))
	if a.String() != b.String() {
		t.Error("the report from results.json differs from the report of the results written")
	}
}
