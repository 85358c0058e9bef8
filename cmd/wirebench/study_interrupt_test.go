package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/wirebench/wirebench/internal/testkit"
)

// TestStudyInterrupted: a real `wirebench study run` child gets SIGINT or
// SIGTERM after its second trial. It stops the trial under way, writes
// the results directory marked interrupted (which cells are complete,
// which signal), opens report.md with the INTERRUPTED line, decides no
// comparison, and exits 130 or 143. Before, it exited 1 with an unmarked
// results.json whose report read like a finished study.
func TestStudyInterrupted(t *testing.T) {
	t.Parallel()
	bin := testkit.Binary(t)
	ok := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { _, _ = w.Write([]byte("ok")) })
	a, b := httptest.NewServer(ok), httptest.NewServer(ok) // 127.0.0.1:0
	t.Cleanup(a.Close)
	t.Cleanup(b.Close)
	for _, tc := range []struct {
		sig  syscall.Signal
		code int
		name string
	}{{syscall.SIGINT, 130, "SIGINT"}, {syscall.SIGTERM, 143, "SIGTERM"}} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			// 2 cells × 20 trials of 300ms: the signal lands long before
			// the end, whatever the machine's speed.
			file := filepath.Join(dir, "tiny.yaml")
			yaml := fmt.Sprintf("name: tiny\ntrials: 20\nwarmup: 0s\nduration: 300ms\nload: {concurrency: 1}\n"+
				"cells:\n  - name: a\n    url: %s/\n  - name: b\n    url: %s/\n", a.URL, b.URL)
			if err := os.WriteFile(file, []byte(yaml), 0o644); err != nil {
				t.Fatal(err)
			}
			out := filepath.Join(dir, "results")
			// exec keeps the study's own PID; 2>&1 shows its progress lines.
			cmd := exec.Command("sh", "-c", `exec "$0" study run "$1" --no-pin --out "$2" 2>&1`, bin, file, out)
			p, _ := testkit.StartLine(t, cmd, regexp.MustCompile(`^\[2/40\] `), 2*time.Minute)
			if err := p.Signal(tc.sig); err != nil {
				t.Fatal(err)
			}
			var ee *exec.ExitError
			if err := p.Wait(); !errors.As(err, &ee) || ee.ExitCode() != tc.code {
				t.Fatalf("exit: %v, want code %d; output:\n%s", err, tc.code, p.Log())
			}
			if !strings.Contains(p.Log(), "wirebench study: interrupted by "+tc.name+" after ") {
				t.Errorf("no interrupted line on stderr:\n%s", p.Log())
			}
			runs, err := filepath.Glob(filepath.Join(out, "tiny-*"))
			if err != nil || len(runs) != 1 {
				t.Fatalf("results directories %v (%v), want one", runs, err)
			}
			data, err := os.ReadFile(filepath.Join(runs[0], "results.json"))
			if err != nil {
				t.Fatal(err)
			}
			var res struct {
				Stop *struct {
					Interrupted     bool
					Signal          string
					TrialsRun       int      `json:"trials_run"`
					TrialsPlanned   int      `json:"trials_planned"`
					IncompleteCells []string `json:"incomplete_cells"`
				} `json:"stop"`
				Trials []struct{ Error string } `json:"trials"`
			}
			if err := json.Unmarshal(data, &res); err != nil {
				t.Fatal(err)
			}
			s := res.Stop
			if s == nil || !s.Interrupted || s.Signal != tc.name || s.TrialsPlanned != 40 || s.TrialsRun < 2 || s.TrialsRun >= 40 ||
				len(s.IncompleteCells) == 0 {
				t.Fatalf("results.json stop = %+v, want interrupted by %s, 2 to 39 of 40 trials, incomplete cells", s, tc.name)
			}
			finished := 0
			for _, tr := range res.Trials {
				if tr.Error == "" {
					finished++
				}
			}
			if finished != s.TrialsRun { // every finished trial kept
				t.Errorf("%d finished trials in results.json, stop says %d", finished, s.TrialsRun)
			}
			md, err := os.ReadFile(filepath.Join(runs[0], "report.md"))
			if err != nil {
				t.Fatal(err)
			}
			lines := strings.Split(string(md), "\n")
			want := fmt.Sprintf("> **INTERRUPTED — %d of 40 trials ran (stopped by %s)", s.TrialsRun, tc.name)
			if len(lines) < 3 || !strings.HasPrefix(lines[2], want) {
				t.Errorf("report.md does not open with %q:\n%s", want, md)
			}
			if !strings.Contains(string(md), "b vs a: not decided, the study was interrupted") {
				t.Errorf("report.md decides the comparison of incomplete cells:\n%s", md)
			}
			// report and compare of the file say so too.
			path := filepath.Join(runs[0], "results.json")
			if _, got, _ := runCLI(t, "report", path); !strings.HasPrefix(strings.Split(got, "\n")[2], want) {
				t.Errorf("wirebench report does not open with %q:\n%s", want, got)
			}
			code, cmp, errs := runCLI(t, "compare", path, path)
			if code != 0 || !strings.Contains(errs, fmt.Sprintf("was interrupted (%s) after %d of 40 trials", tc.name, s.TrialsRun)) ||
				!strings.HasPrefix(cmp, "old: INTERRUPTED — ") || strings.Contains(cmp, "~ (p=") {
				t.Errorf("compare: exit %d, stdout %s, stderr %s", code, cmp, errs)
			}
		})
	}
}
