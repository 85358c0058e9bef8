package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/wirebench/wirebench/report"
	"github.com/wirebench/wirebench/report/reporttest"
	"github.com/wirebench/wirebench/results"
)

// writeResults stores a synthetic study as results.json in a temp dir.
func writeResults(t *testing.T, name string, o reporttest.Options) (string, *results.Study) {
	t.Helper()
	r := reporttest.Results(o)
	path := filepath.Join(t.TempDir(), name)
	var buf bytes.Buffer
	if err := r.Write(&buf); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	return path, r
}

func runCLI(t *testing.T, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var out, errb bytes.Buffer
	code = run(context.Background(), &cliEnv{stdin: strings.NewReader(""), stdout: &out, stderr: &errb}, args)
	return code, out.String(), errb.String()
}

func TestReportCommand(t *testing.T) {
	path, r := writeResults(t, "results.json", reporttest.Options{Faults: true})
	// Read back through JSON, as the command does: the rendering must not
	// depend on anything the file loses.
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	read, err := results.Read(f)
	f.Close()
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{}
	for name, render := range reportFormats {
		var buf bytes.Buffer
		if err := render(&buf, report.Build(read)); err != nil {
			t.Fatal(err)
		}
		want[name] = buf.String()
	}
	if len(want) < 2 {
		t.Fatalf("only %d formats registered", len(want))
	}
	for name := range want {
		t.Run(name, func(t *testing.T) {
			// Flags after the file, as in the documented usage.
			code, out, errs := runCLI(t, "report", path, "--format", name)
			if code != 0 || out != want[name] {
				t.Fatalf("exit %d, stderr %q; output matches: %v", code, errs, out == want[name])
			}
			if !strings.Contains(out, r.Cells[0].Label) {
				t.Errorf("output does not name cell %q", r.Cells[0].Label)
			}
			file := filepath.Join(t.TempDir(), "out."+name)
			if code, _, errs := runCLI(t, "report", "--format", name, "-o", file, path); code != 0 {
				t.Fatalf("-o: exit %d: %s", code, errs)
			}
			if got, _ := os.ReadFile(file); string(got) != want[name] {
				t.Errorf("-o file differs from stdout output")
			}
		})
	}
}

func TestReportCommandErrors(t *testing.T) {
	path, _ := writeResults(t, "results.json", reporttest.Options{})
	bad := filepath.Join(t.TempDir(), "bad.json")
	os.WriteFile(bad, []byte(`{"schema":"other/v9"}`), 0o644)
	tests := []struct {
		name string
		args []string
		code int
		msg  string
	}{
		{"no file", []string{"report"}, 2, "want one result file"},
		{"bad format", []string{"report", "--format", "pdf", path}, 2, `unknown format "pdf"`},
		{"missing file", []string{"report", filepath.Join(t.TempDir(), "nope.json")}, 1, "no such file"},
		{"wrong schema", []string{"report", bad}, 1, "bad.json: results: bad results file"},
		{"compare one file", []string{"compare", path}, 2, "want two result files"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, _, errs := runCLI(t, tt.args...)
			if code != tt.code || !strings.Contains(errs, tt.msg) {
				t.Errorf("exit %d, stderr %q; want exit %d and %q", code, errs, tt.code, tt.msg)
			}
		})
	}
}

// compareRows parses the compare output into metric → cell → delta column.
func compareRows(t *testing.T, out string) map[string]map[string]string {
	t.Helper()
	header := regexp.MustCompile(`^(\S.*?)\s{2,}old\s+new\s+vs old$`)
	delta := regexp.MustCompile(`\s((?:~|[+-]\d+\.\d+%|0\.00%) \(p=[0-9.]+ n=\d+\+\d+\))$`)
	rows := map[string]map[string]string{}
	metric := ""
	for _, line := range strings.Split(out, "\n") {
		if m := header.FindStringSubmatch(line); m != nil {
			metric = m[1]
			rows[metric] = map[string]string{}
			continue
		}
		if line == "" || metric == "" {
			metric = ""
			continue
		}
		m := delta.FindStringSubmatch(line)
		if m == nil {
			t.Fatalf("row without a delta: %q", line)
		}
		cell := strings.TrimSpace(line[:strings.Index(line, "  ")])
		rows[metric][cell] = m[1]
	}
	return rows
}

func TestCompareSelf(t *testing.T) {
	path, r := writeResults(t, "results.json", reporttest.Options{})
	code, out, errs := runCLI(t, "compare", path, path)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	rows := compareRows(t, out)
	n := 0
	for metric, cells := range rows {
		for cell, d := range cells {
			if !strings.HasPrefix(d, "~ (p=1.000") {
				t.Errorf("%s %s: %q, want ~ with p=1", metric, cell, d)
			}
			n++
		}
	}
	shown := 0 // optional metrics (capacity) are shown only where measured
	for _, k := range report.ABMetrics {
		if m, ok := report.MetricByKey(k); ok && !m.Optional {
			shown++
		}
	}
	if want := len(r.Cells) * shown; n != want {
		t.Fatalf("checked %d rows, want %d:\n%s", n, want, out)
	}
}

// A variant 1.5× slower in every latency and CPU cost must be reported as
// significantly slower (p < 0.01; the synthetic trials have ties, so the
// normal approximation gives 0.005 rather than the exact 2/924); what did
// not change must be "~".
func TestCompareSlowdown(t *testing.T) {
	oldPath, r := writeResults(t, "old.json", reporttest.Options{Trials: 6})
	newPath, _ := writeResults(t, "new.json", reporttest.Options{Trials: 6, Slowdown: 1.5})
	code, out, errs := runCLI(t, "compare", oldPath, newPath)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	rows := compareRows(t, out)
	want := map[string]*regexp.Regexp{
		"req/s":          regexp.MustCompile(`^-33\.\d\d% \(p=0\.00\d n=6\+6\)$`),
		"p50":            regexp.MustCompile(`^\+(49|50)\.\d\d% \(p=0\.00\d n=6\+6\)$`),
		"p99":            regexp.MustCompile(`^\+(49|50)\.\d\d% \(p=0\.00\d n=6\+6\)$`),
		"server CPU/req": regexp.MustCompile(`^\+(49|50)\.\d\d% \(p=0\.00\d n=6\+6\)$`),
		"recv body/req":  regexp.MustCompile(`^~ \(p=`),
	}
	n := 0
	for metric, re := range want {
		if len(rows[metric]) != len(r.Cells) {
			t.Fatalf("%s: %d rows, want %d:\n%s", metric, len(rows[metric]), len(r.Cells), out)
		}
		for cell, d := range rows[metric] {
			if !re.MatchString(d) {
				t.Errorf("%s %s: %q, want %v", metric, cell, d, re)
			}
			n++
		}
	}
	if n != len(want)*len(r.Cells) {
		t.Fatalf("checked %d rows", n)
	}
}
