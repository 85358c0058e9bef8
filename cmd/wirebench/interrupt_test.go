package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/wirebench/wirebench/internal/testkit"
)

// readOut decodes the parts of a load --out file these tests look at.
func readOut(t *testing.T, path string) (out struct {
	Stop *struct {
		Interrupted bool   `json:"interrupted"`
		Signal      string `json:"signal"`
	} `json:"stop"`
	Window     int64 `json:"window_ns"`
	Options    struct{ Duration int64 }
	Thresholds []struct {
		Expr, Measured string
		Pass           bool
	} `json:"thresholds"`
}) {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(data, &out); err != nil {
		t.Fatal(err)
	}
	return out
}

// TestLoadInterrupted: a signal mid-run ends it with the partial summary,
// --out marked interrupted with the real window, exit 130 (SIGINT) or 143
// (SIGTERM). Before, Ctrl-C exited 0 and the file looked like a full run.
func TestLoadInterrupted(t *testing.T) {
	t.Parallel()
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
	t.Cleanup(ts.Close)
	for _, tc := range []struct {
		sig  syscall.Signal
		code int
		name string
	}{{syscall.SIGINT, 130, "SIGINT"}, {syscall.SIGTERM, 143, "SIGTERM"}} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			out := filepath.Join(t.TempDir(), "run.json")
			ctx, cancel := context.WithCancelCause(context.Background())
			time.AfterFunc(300*time.Millisecond, func() { cancel(signalError{tc.sig}) })
			var stdout, stderr bytes.Buffer
			code := run(ctx, &cliEnv{stdin: strings.NewReader(""), stdout: &stdout, stderr: &stderr},
				[]string{"load", "-q", "-c", "2", "-d", "60s", "--out", out, ts.URL})
			if code != tc.code || !strings.Contains(stdout.String(), "INTERRUPTED by "+tc.name) || !strings.Contains(stderr.String(), "interrupted by "+tc.name) {
				t.Fatalf("exit %d, want %d; stdout %s\nstderr %s", code, tc.code, stdout.String(), stderr.String())
			}
			res := readOut(t, out)
			if res.Stop == nil || !res.Stop.Interrupted || res.Stop.Signal != tc.name {
				t.Errorf("--out stop = %+v, want interrupted by %s", res.Stop, tc.name)
			}
			if w := time.Duration(res.Window); w <= 0 || w >= 60*time.Second {
				t.Errorf("window %v: want the real one, well under the planned 60s", w)
			}
			// report says so first; compare and merge warn.
			_, md, _ := runCLI(t, "report", out)
			if lines := strings.SplitN(md, "\n", 4); len(lines) < 3 || !strings.Contains(lines[2], "INTERRUPTED by "+tc.name) {
				t.Errorf("report does not open with the interruption:\n%s", md)
			}
			code, cmp, errs := runCLI(t, "compare", out, out)
			if code != 0 || !strings.Contains(errs, "warning: "+out+" was interrupted ("+tc.name+")") || !strings.Contains(cmp, "INTERRUPTED") {
				t.Errorf("compare: exit %d, stdout %s, stderr %s", code, cmp, errs)
			}
			code, _, errs = runCLI(t, "merge", "--unchecked", out)
			if code != 0 || !strings.Contains(errs, "was interrupted ("+tc.name+")") {
				t.Errorf("merge: exit %d, stderr %s", code, errs)
			}
		})
	}
}

// TestThresholdsTravelWithTheResult: the verdicts are in --out; report
// opens with a failure; compare says which side failed.
func TestThresholdsTravelWithTheResult(t *testing.T) {
	t.Parallel()
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
	t.Cleanup(ts.Close)
	dir := t.TempDir()
	pass, fail := filepath.Join(dir, "pass.json"), filepath.Join(dir, "fail.json")
	if code, _, errs := runCLI(t, "load", "-q", "-n", "20", "-c", "1", "--threshold", "errors<1%", "--out", pass, ts.URL); code != 0 {
		t.Fatalf("passing run: exit %d: %s", code, errs)
	}
	if code, _, errs := runCLI(t, "load", "-q", "-n", "20", "-c", "1", "--threshold", "errors<1%", "--threshold", "rps>1000000000", "--out", fail, ts.URL); code != exitThreshold {
		t.Fatalf("failing run: exit %d, want %d: %s", code, exitThreshold, errs)
	}
	res := readOut(t, fail)
	if len(res.Thresholds) != 2 || !res.Thresholds[0].Pass || res.Thresholds[1].Pass || res.Thresholds[1].Expr != "rps>1000000000" || res.Thresholds[1].Measured == "" {
		t.Errorf("--out thresholds = %+v", res.Thresholds)
	}
	_, md, _ := runCLI(t, "report", fail)
	if lines := strings.SplitN(md, "\n", 4); len(lines) < 3 || !strings.HasPrefix(lines[2], "> **FAILED its thresholds: rps>1000000000 (measured") {
		t.Errorf("report does not open with the failure:\n%s", md)
	}
	_, html, _ := runCLI(t, "report", "--format", "html", fail)
	if !strings.Contains(html, "FAILED its thresholds") {
		t.Error("HTML report lacks the failure")
	}
	_, md, _ = runCLI(t, "report", pass)
	if !strings.Contains(md, "Passed its thresholds: errors<1%") {
		t.Errorf("report of a passing run lacks its verdict:\n%s", md)
	}
	code, cmp, _ := runCLI(t, "compare", pass, fail)
	if code != 0 || !strings.Contains(cmp, "fail FAILED its thresholds") || !strings.Contains(cmp, "the new run failed its thresholds") {
		t.Errorf("compare: exit %d\n%s", code, cmp)
	}
}

// TestSIGTERMEndsALargeRunPromptly: the built binary, a large but allowed
// run (2000 VUs), SIGTERM a second in: it exits 143 with its partial
// result well within the bound (generous: a busy 2-CPU box), under a 4 GB
// address-space cap where prlimit exists. -c 100000000 once ignored
// SIGTERM for 20 minutes.
func TestSIGTERMEndsALargeRunPromptly(t *testing.T) {
	bin := testkit.Binary(t)
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
	t.Cleanup(ts.Close)
	out := filepath.Join(t.TempDir(), "run.json")
	args := []string{bin, "load", "-q", "-c", "2000", "-d", "60s", "--out", out, ts.URL}
	if p, err := exec.LookPath("prlimit"); err == nil {
		args = append([]string{p, "--as=4000000000"}, args...)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, args[0], args[1:]...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	time.Sleep(time.Second)
	sent := time.Now()
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil { // prlimit execs: same PID
		t.Fatal(err)
	}
	err := cmd.Wait()
	took := time.Since(sent)
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 143 {
		t.Fatalf("exit %v, want 143; stderr %s", err, stderr.String())
	}
	if testkit.Timing() && took > 15*time.Second {
		t.Errorf("exited %v after SIGTERM", took)
	}
	t.Logf("exited %v after SIGTERM", took)
	if res := readOut(t, out); res.Stop == nil || !res.Stop.Interrupted {
		t.Errorf("--out not marked interrupted: %+v", res.Stop)
	}
}
