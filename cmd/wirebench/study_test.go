package main

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestStudyCommandUsage(t *testing.T) {
	for _, tc := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"study", "list"}, 0, "grpc-vs-rest"},
		{[]string{"study"}, 2, "want one study name"},
		{[]string{"study", "nope"}, 2, `no study "nope"`},
		{[]string{"study", "formats", "extra"}, 2, "want one study name"},
		{[]string{"study", "--client-cpus", "x", "formats"}, 2, "client-cpus"},
		{[]string{"study", "-h"}, 0, "-serve-args"},
		{[]string{"study", "-h"}, 0, "study run FILE.yaml"},
		{[]string{"study", "run"}, 2, "want one study file, got 0"},
		{[]string{"study", "run", "a.yaml", "b.yaml"}, 2, "want one study file, got 2"},
		{[]string{"study", "run", "/nonexistent/s.yaml"}, 2, "no such file"},
		{[]string{"study", "init", "a", "b"}, 2, "at most one file"},
		{[]string{"study", "formats", "--ports", "9100-9000"}, 2, `--ports: "9100-9000": want LO-HI with 1 <= LO <= HI <= 65535`},
		{[]string{"study", "formats", "--ports", "9000"}, 2, "want LO-HI"},
		{[]string{"study", "formats", "--ports", "9000-9000"}, 2, "--ports 9000-9000 holds 1 ports; cell"},
		{[]string{"study", "bulk-upsert", "--ports", "9000-9000"}, 2, "bulk-upsert's server needs 2"},
	} {
		code, out, errs := runCLI(t, tc.args...)
		if code != tc.code || !strings.Contains(out+errs, tc.want) {
			t.Errorf("wirebench %v: exit %d, want %d; output lacks %q:\n%s%s", tc.args, code, tc.code, tc.want, out, errs)
		}
	}
}

// TestStudyInitThenRunRefusesAMisspeltField: init writes the example and
// never overwrites; a misspelt field is refused by name and line, exit 2.
func TestStudyInitThenRunRefusesAMisspeltField(t *testing.T) {
	path := filepath.Join(t.TempDir(), "s.yaml")
	if code, _, errs := runCLI(t, "study", "init", path); code != 0 || !strings.Contains(errs, "wirebench study run "+path) {
		t.Fatalf("init: exit %d: %s", code, errs)
	}
	if code, _, errs := runCLI(t, "study", "init", path); code != 1 || !strings.Contains(errs, "exists; not overwriting") {
		t.Fatalf("second init: exit %d: %s", code, errs)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	bad := strings.Replace(string(data), "concurrency: 20", "concurency: 20", 1)
	if err := os.WriteFile(path, []byte(bad), 0o644); err != nil {
		t.Fatal(err)
	}
	line := 1 + strings.Count(bad[:strings.Index(bad, "concurency")], "\n")
	code, _, errs := runCLI(t, "study", "run", path)
	want := fmt.Sprintf(`%s:%d: unknown field "concurency" in load; did you mean "concurrency"?`, path, line)
	if code != 2 || !strings.Contains(errs, want) {
		t.Fatalf("exit %d, want 2 and %q in:\n%s", code, want, errs)
	}
}

// TestStudyRunExitsNonZeroNamingTheFailedCell runs a study file of two
// cells: an external server that works and a server command that cannot
// start. The reports are written, and the exit status is 1 with a line
// naming the failed cell.
func TestStudyRunExitsNonZeroNamingTheFailedCell(t *testing.T) {
	if testing.Short() {
		t.Skip("runs a study; skipped with -short")
	}
	ext := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { fmt.Fprintln(w, "ok") }))
	defer ext.Close()
	dir := t.TempDir()
	path := filepath.Join(dir, "s.yaml")
	study := fmt.Sprintf(`name: exitcode
trials: 1
warmup: 0s
duration: 200ms
load: {url: "http://127.0.0.1:{port}/", concurrency: 1}
cells:
  - name: running
    url: %s/
  - name: broken
    server: {command: ["false"], ready_timeout: 2s}
`, ext.URL)
	if err := os.WriteFile(path, []byte(study), 0o644); err != nil {
		t.Fatal(err)
	}
	code, out, errs := runCLI(t, "study", "run", path, "--out", filepath.Join(dir, "out"), "--no-pin")
	if code != 1 || !strings.Contains(errs, "1 of 2 cells had no successful trial") ||
		!strings.Contains(errs, "cell exitcode/broken: no successful trial (1 of 1 failed; first: study: server exited before it was ready") {
		t.Fatalf("exit %d:\n%s", code, errs)
	}
	if !strings.Contains(out, "server already running") {
		t.Errorf("report does not say the external server was not sampled:\n%s", out)
	}
	written, _ := filepath.Glob(filepath.Join(dir, "out", "exitcode-*", "results.json"))
	if len(written) != 1 {
		t.Errorf("results written: %v", written)
	}
}
