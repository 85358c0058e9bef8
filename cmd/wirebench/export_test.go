package main

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/wirebench/wirebench/report/reporttest"
)

// TestExport: export writes a study and two load runs into one tracker
// file, each run a benchmark by its file's name, the figures as plain
// numbers; the file passes the format's published schema (checked with
// Python's jsonschema where it is installed); two results naming the same
// benchmark are refused.
func TestExport(t *testing.T) {
	study, _ := writeResults(t, "results.json", reporttest.Options{})
	old, err := os.ReadFile("../../results/testdata/load-v1.json")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	h1, h2 := filepath.Join(dir, "h1.json"), filepath.Join(dir, "h2.json")
	for _, p := range []string{h1, h2} {
		if err := os.WriteFile(p, old, 0o644); err != nil {
			t.Fatal(err)
		}
	}

	bmf := filepath.Join(dir, "bmf.json")
	if code, _, stderr := runCLI(t, "export", "--format", "bmf", "-o", bmf, study, h1, h2); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	var doc map[string]map[string]struct {
		Value *float64 `json:"value"`
	}
	b, _ := os.ReadFile(bmf)
	if err := json.Unmarshal(b, &doc); err != nil {
		t.Fatalf("%v\n%s", err, b)
	}
	for _, bench := range []string{"load/h1", "load/h2", "synthetic/crud c=50/toon"} {
		if p99 := doc[bench]["p99"].Value; p99 == nil || *p99 <= 0 {
			t.Errorf("%s: p99 %v, want a number of ns\n%s", bench, p99, b)
		}
	}
	validate(t, "testdata/bmf.schema.json", bmf)

	for _, format := range []string{"github-action-benchmark", "customBiggerIsBetter"} {
		code, stdout, stderr := runCLI(t, "export", "--format", format, study, h1)
		if code != 0 {
			t.Fatalf("%s: exit %d: %s", format, code, stderr)
		}
		var entries []struct {
			Name, Unit string
			Value      float64
		}
		if err := json.Unmarshal([]byte(stdout), &entries); err != nil || len(entries) == 0 {
			t.Fatalf("%s: %v, %d entries\n%s", format, err, len(entries), stdout)
		}
		want := map[string]string{"github-action-benchmark": "load/h1 p99", "customBiggerIsBetter": "load/h1 rps"}[format]
		if !strings.Contains(stdout, `"name": "`+want+`"`) {
			t.Errorf("%s: no %q in\n%s", format, want, stdout)
		}
		file := filepath.Join(dir, format+".json")
		os.WriteFile(file, []byte(stdout), 0o644)
		validate(t, "testdata/action.schema.json", file)
	}

	if code, _, stderr := runCLI(t, "export", h1, h1); code != 2 || !strings.Contains(stderr, `benchmark "load/h1"`) {
		t.Errorf("the same run twice: exit %d, %s", code, stderr)
	}
	if code, _, stderr := runCLI(t, "export", "--format", "csv", h1); code != 2 || !strings.Contains(stderr, "unknown format") {
		t.Errorf("--format csv: exit %d, %s", code, stderr)
	}
}

// validate checks file against a JSON schema with Python's jsonschema,
// skipped where it is not installed.
func validate(t *testing.T, schema, file string) {
	t.Helper()
	if exec.Command("python3", "-c", "import jsonschema").Run() != nil {
		t.Logf("python3 jsonschema not installed: %s not checked against %s", file, schema)
		return
	}
	out, err := exec.Command("python3", "-c", `import json, sys, jsonschema
jsonschema.validate(json.load(open(sys.argv[2])), json.load(open(sys.argv[1])))`, schema, file).CombinedOutput()
	if err != nil {
		t.Errorf("%s against %s: %v\n%s", file, schema, err, out)
	}
}
