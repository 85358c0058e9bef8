package main

import (
	"bytes"
	"context"
	"encoding/csv"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/wirebench/wirebench/internal/testkit"
	"github.com/wirebench/wirebench/results"
)

// loadOnce runs a short raw load against url and writes --out (and
// --hdr-out, when hdr is set) into dir; it returns the result path.
func loadOnce(t *testing.T, dir, name, url string, extra ...string) string {
	t.Helper()
	out := filepath.Join(dir, name)
	args := append([]string{"load", "-q", "-c", "2", "-n", "300", "--out", out}, extra...)
	code, stdout, stderr := runCLI(t, append(args, url)...)
	if code != 0 {
		t.Fatalf("load exit %d\n%s\n%s", code, stdout, stderr)
	}
	return out
}

func okServer(t *testing.T) (*httptest.Server, *atomic.Int64) {
	t.Helper()
	var hits atomic.Int64
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		w.Write([]byte(`{"ok":true}`))
	}))
	t.Cleanup(ts.Close)
	return ts, &hits
}

// A plain load run is a first-class result: report renders it in every
// format, with its latency distribution and no claim of significance.
func TestReportLoadRun(t *testing.T) {
	ts, _ := okServer(t)
	dir := t.TempDir()
	run := loadOnce(t, dir, "run.json", ts.URL+"/")
	for _, tc := range []struct {
		format string
		want   []string
	}{
		{"md", []string{"# wirebench load: raw " + ts.URL + "/", "Latency distribution", "| p99.9 |", "A single run: no spread",
			"closed loop, 2 VUs", "300 (100% passed)", "| run |"}},
		{"html", []string{"<svg", "Latency by percentile", "Latency distribution", "A single run"}},
		{"csv", []string{"kind,group,cell,label,baseline,operation", "req_per_s", "p50_ms", "\ncell,raw,raw,run,false,,1,0,300,0,"}},
	} {
		t.Run(tc.format, func(t *testing.T) {
			code, out, errs := runCLI(t, "report", "--format", tc.format, run)
			if code != 0 {
				t.Fatalf("exit %d: %s", code, errs)
			}
			for _, w := range tc.want {
				if !strings.Contains(out, w) {
					t.Errorf("%s output lacks %q:\n%s", tc.format, w, out)
				}
			}
			for _, bad := range []string{"server CPU/req", "peak RSS", "trials per cell", "confidence interval", "p=", "vs baseline"} {
				if tc.format == "md" && strings.Contains(out, bad) {
					t.Errorf("single-run report says %q:\n%s", bad, out)
				}
			}
		})
	}
	csvOut := filepath.Join(dir, "run.csv")
	if code, _, errs := runCLI(t, "report", "--format", "csv", "-o", csvOut, run); code != 0 {
		t.Fatal(errs)
	}
	f, _ := os.Open(csvOut)
	rows, err := csv.NewReader(f).ReadAll()
	f.Close()
	if err != nil || len(rows) != 3 { // header, cell, one op
		t.Fatalf("csv: %d rows, %v", len(rows), err)
	}
	for _, h := range rows[0] {
		if strings.HasSuffix(h, "_ns") || h == "p50" || h == "lat_p50" {
			t.Errorf("column %q has no unit or nanoseconds", h)
		}
	}
	// -o never replaces a file without --force.
	if code, _, errs := runCLI(t, "report", "-o", csvOut, run); code != 1 || !strings.Contains(errs, "file exists") {
		t.Errorf("second -o: exit %d, %s", code, errs)
	}
	if code, _, errs := runCLI(t, "report", "--force", "-o", csvOut, run); code != 0 {
		t.Errorf("-o --force: exit %d, %s", code, errs)
	}
	if b, _ := os.ReadFile(csvOut); !bytes.HasPrefix(b, []byte("# wirebench load")) {
		t.Errorf("--force did not replace the file: %.40q", b)
	}
}

// compare reads two load --out files and sets them side by side.
func TestCompareLoadRuns(t *testing.T) {
	ts, _ := okServer(t)
	dir := t.TempDir()
	a := loadOnce(t, dir, "before.json", ts.URL+"/")
	b := loadOnce(t, dir, "after.json", ts.URL+"/", "-c", "3")
	code, out, errs := runCLI(t, "compare", a, b)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	for _, w := range []string{"single run each: no significance claimed", "before", "after", "req/s", "p50", "p99", "p99.9",
		"runs differ: load model closed loop, 2 VUs vs closed loop, 3 VUs"} {
		if !strings.Contains(out, w) {
			t.Errorf("compare output lacks %q:\n%s", w, out)
		}
	}
	if strings.Contains(out, "~") || strings.Contains(out, "p=") {
		t.Errorf("single runs must claim neither a difference nor its absence:\n%s", out)
	}
}

// load --out never replaces a file without --force, and refuses before
// running; --hdr-out writes an HdrHistogram log that reads back.
func TestLoadOutExclusive(t *testing.T) {
	ts, hits := okServer(t)
	dir := t.TempDir()
	out := loadOnce(t, dir, "run.json", ts.URL+"/", "--hdr-out", filepath.Join(dir, "run.hlog"))
	before, _ := os.ReadFile(out)
	n := hits.Load()
	code, _, errs := runCLI(t, "load", "-q", "-n", "10", "--out", out, ts.URL+"/")
	if code != 1 || !strings.Contains(errs, "file exists (use --force") {
		t.Errorf("exit %d, stderr %q; want a refusal naming --force", code, errs)
	}
	if hits.Load() != n {
		t.Error("the refused run sent requests: the check must come before the load")
	}
	if after, _ := os.ReadFile(out); !bytes.Equal(before, after) {
		t.Error("the existing --out file changed")
	}
	loadOnce(t, dir, "run.json", ts.URL+"/", "--force", "-n", "20")
	res, err := results.ReadFile(out)
	if err != nil || res.Trials[0].Load.Requests != 20 {
		t.Errorf("--force did not replace the result: %v", err)
	}
	f, err := os.Open(filepath.Join(dir, "run.hlog"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	h, err := results.ReadHdrLog(f)
	if err != nil || h.TotalCount() != 300 {
		t.Errorf("HdrHistogram log: %v, %d values, want 300", err, h.TotalCount())
	}
}

// merge --out writes whole files and never replaces one without --force.
func TestMergeOut(t *testing.T) {
	ts, _ := okServer(t)
	dir := t.TempDir()
	a := loadOnce(t, dir, "s1.json", ts.URL+"/", "--segment", "1/2")
	b := loadOnce(t, dir, "s2.json", ts.URL+"/", "--segment", "2/2")
	all := filepath.Join(dir, "all.json")
	if code, _, errs := runCLI(t, "merge", "--out", all, a, b); code != 0 {
		t.Fatal(errs)
	}
	f, _ := os.Open(all)
	m, err := results.ReadLoad(f)
	f.Close()
	if err != nil || m.Requests != 300 {
		t.Fatalf("merged: %v, %d requests", err, m.Requests)
	}
	if code, _, errs := runCLI(t, "merge", "--out", all, a, b); code != 1 || !strings.Contains(errs, "file exists") {
		t.Errorf("second merge: exit %d, %s", code, errs)
	}
	if code, _, errs := runCLI(t, "merge", "--unchecked", "--force", "--out", all, a); code != 0 {
		t.Errorf("merge --force: exit %d, %s", code, errs)
	}
	f, _ = os.Open(all)
	m, err = results.ReadLoad(f)
	f.Close()
	if err != nil || m.Requests != 150 {
		t.Errorf("after --force: %v, %d requests, want 150", err, m.Requests)
	}
}

// A load killed mid-run leaves the previous --out file intact, and one
// stopped with SIGINT writes a whole result (with --force) or refuses.
func TestLoadKilledKeepsPrevious(t *testing.T) {
	bin := testkit.Binary(t)
	ts, hits := okServer(t)
	dir := t.TempDir()
	out := filepath.Join(dir, "run.json")
	previous := []byte("the previous result\n")
	if err := os.WriteFile(out, previous, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, sig := range []syscall.Signal{syscall.SIGKILL, syscall.SIGINT} {
		t.Run(sig.String(), func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
			defer cancel()
			// Open loop at 200 req/s keeps the box quiet; 30 s is far
			// longer than the test waits.
			cmd := exec.CommandContext(ctx, bin, "load", "-q", "-r", "200", "-c", "2", "-d", "30s", "--force", "--out", out, ts.URL+"/")
			var stderr bytes.Buffer
			cmd.Stderr = &stderr
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			start := hits.Load()
			deadline := time.Now().Add(30 * time.Second) // generous: a busy 2-core box
			for hits.Load() < start+20 && time.Now().Before(deadline) {
				time.Sleep(20 * time.Millisecond)
			}
			if hits.Load() < start+20 {
				cmd.Process.Kill()
				t.Fatalf("the load never got going: %s", stderr.String())
			}
			cmd.Process.Signal(sig)
			err := cmd.Wait()
			got, _ := os.ReadFile(out)
			switch sig {
			case syscall.SIGKILL:
				if err == nil {
					t.Error("killed load exited 0")
				}
				if !bytes.Equal(got, previous) {
					t.Errorf("after SIGKILL the --out file holds %.60q, want the previous file", got)
				}
			case syscall.SIGINT:
				res, rerr := results.Read(bytes.NewReader(got))
				if rerr != nil {
					t.Fatalf("after SIGINT: %v (exit %v, %s)", rerr, err, stderr.String())
				}
				if res.Trials[0].Load.Requests == 0 {
					t.Error("the interrupted run's result holds no requests")
				}
			}
			ents, _ := os.ReadDir(dir)
			for _, e := range ents {
				if strings.HasSuffix(e.Name(), ".tmp") {
					t.Errorf("stray temporary file %s", e.Name())
				}
			}
		})
	}
}

func TestCellsLine(t *testing.T) {
	for n, want := range map[int]string{0: "sizes only", 1: "1 cell", 5: "5 cells"} {
		if got := cellsLine(n); got != want {
			t.Errorf("cellsLine(%d) = %q, want %q", n, got, want)
		}
	}
}
