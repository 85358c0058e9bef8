package main

import (
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/wirebench/wirebench/measure"
	"github.com/wirebench/wirebench/results"
)

// gateStudy writes a two-cell results.json: n trials a side with 1%
// lognormal noise, the change's server CPU per request times cpuFactor.
func gateStudy(t *testing.T, n int, cpuFactor float64) string {
	t.Helper()
	rng := rand.New(rand.NewPCG(11, uint64(n)))
	noisy := func(v float64) float64 { return v * math.Exp(0.01*rng.NormFloat64()) }
	s := &results.Study{Schema: results.StudySchema, Study: "gate", Options: results.StudyOptions{Order: "abba"},
		Cells: []results.Cell{{ID: "gate/base", Label: "base", Baseline: true, Rev: "main"}, {ID: "gate/change", Label: "change", Rev: "HEAD"}}}
	start := time.Unix(1e9, 0)
	for i := range 2 * n {
		cell, f := s.Cells[i%2].ID, 1.0
		if i%2 == 1 {
			f = cpuFactor
		}
		h := measure.NewHistogram()
		lat := time.Duration(noisy(2e6))
		for range 50 {
			h.Record(lat)
		}
		req := int64(noisy(10000))
		s.Trials = append(s.Trials, results.Trial{Cell: cell, Index: i / 2, Order: i, ServerPID: 100 + i, ServerCPUs: []int{1}, ClientCPUs: []int{0},
			Load: &results.Load{Schema: results.LoadSchema, Requests: req, Start: start, End: start.Add(time.Second),
				Latency: h, Service: h, Lag: measure.NewHistogram()},
			Server: results.ServerStats{CPU: time.Duration(noisy(50e3*f)) * time.Duration(req)}})
	}
	path := filepath.Join(t.TempDir(), "results.json")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if err := s.Write(f); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestGateExitCodes: the verdict's exit codes, as CI sees them.
func TestGateExitCodes(t *testing.T) {
	slow, same, few := gateStudy(t, 8, 3), gateStudy(t, 8, 1), gateStudy(t, 2, 3)
	for _, tc := range []struct {
		name string
		args []string
		code int
		out  string // in stdout
		err  string // in stderr
	}{
		{"regression", []string{slow}, 1, "cpu_per_req", "wirebench gate: REGRESSION: cpu_per_req +"},
		{"identical", []string{same, "--max-regression", "p99:+10%", "--max-regression", "rps:-5%", "--max-regression", "cpu_per_req:+5%"}, 0, "PASS", ""},
		{"too few trials", []string{few}, 3, "run at least 4 per side", "wirebench gate: UNDECIDABLE"},
		{"github", []string{slow, "--format", "github", "--link", "https://ci/r.html"}, 1, "### ❌ Regression — wirebench gate (exit 1)", ""},
		{"json", []string{same, "--format=json"}, 0, `"verdict": "pass"`, ""},
		{"cells by name", []string{slow, "--base", "change", "--change", "base"}, 0, "PASS", ""},
		{"bad tolerance", []string{slow, "--max-regression", "rps:+5%"}, 2, "", "rps regresses by a fall; write rps:-5%; see 'wirebench gate -h'"},
		{"unknown cell", []string{slow, "--base", "nope"}, 2, "", `no cell "nope" (have gate/base, gate/change)`},
		{"bad format", []string{slow, "--format", "yaml"}, 2, "", "unknown format"},
		{"bad alpha", []string{slow, "--alpha", "0.7"}, 2, "", "want 0 < α < 0.5"},
		{"no file", []string{filepath.Join(t.TempDir(), "missing.json")}, 2, "", "no such file"},
		{"two files", []string{slow, same}, 2, "", "want one results.json"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, out, errs := runCLI(t, append([]string{"gate"}, tc.args...)...)
			if code != tc.code || !strings.Contains(out, tc.out) || !strings.Contains(errs, tc.err) {
				t.Errorf("exit %d (want %d)\nstdout %s\nstderr %s", code, tc.code, out, errs)
			}
		})
	}
}

// TestGateStudyFolder: gate takes a study's --out folder, which gains a
// run directory per run, and judges its newest run (the docs' command
// before this matched every run's results.json and was refused).
func TestGateStudyFolder(t *testing.T) {
	out := t.TempDir()
	put := func(name, src string, mtime time.Time) string {
		dir := filepath.Join(out, name)
		if err := os.Mkdir(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		b, err := os.ReadFile(src)
		if err != nil {
			t.Fatal(err)
		}
		f := filepath.Join(dir, "results.json")
		if err := os.WriteFile(f, b, 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.Chtimes(f, mtime, mtime); err != nil {
			t.Fatal(err)
		}
		return f
	}
	now := time.Now()
	slow := put("gate-20261128T100000Z", gateStudy(t, 8, 3), now.Add(-time.Hour))
	same := put("gate-20261128T110000Z", gateStudy(t, 8, 1), now)
	code, stdout, stderr := runCLI(t, "gate", out)
	if code != 0 || !strings.Contains(stdout, "PASS") || !strings.Contains(stderr, "judging "+same+" (the newest of 2 runs in "+out+")") {
		t.Errorf("gate %s: exit %d, want 0 judging %s\nstdout %s\nstderr %s", out, code, same, stdout, stderr)
	}
	if err := os.Chtimes(slow, now.Add(time.Minute), now.Add(time.Minute)); err != nil {
		t.Fatal(err)
	}
	if code, _, stderr := runCLI(t, "gate", out); code != 1 || !strings.Contains(stderr, "judging "+slow) {
		t.Errorf("gate %s after the slow run became newest: exit %d, want 1\nstderr %s", out, code, stderr)
	}
	if code, _, stderr := runCLI(t, "gate", filepath.Dir(same)); code != 0 || strings.Contains(stderr, "judging") {
		t.Errorf("gate on one run's folder: exit %d, want 0 and no note\nstderr %s", code, stderr)
	}
	if code, _, stderr := runCLI(t, "gate", t.TempDir()); code != 2 || !strings.Contains(stderr, "has no results.json") {
		t.Errorf("gate on an empty folder: exit %d, want 2\nstderr %s", code, stderr)
	}
}

// TestGateAAStudy: a study of two cells at one commit (an A/A run, its
// baseline named) is judged without --change, and says what it is.
func TestGateAAStudy(t *testing.T) {
	path := gateStudy(t, 8, 1)
	s, err := results.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	for i := range s.Cells {
		s.Cells[i].Rev, s.Cells[i].Commit, s.Cells[i].Command = "HEAD", "0123456789abcdef0123", []string{"./srv", "-addr", "127.0.0.1:{port}"}
	}
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Write(f); err != nil {
		t.Fatal(err)
	}
	f.Close()
	code, stdout, stderr := runCLI(t, "gate", path)
	if code == 2 || !strings.Contains(stdout, "the change (gate/change) runs the base's build (0123456789ab): an A/A run") {
		t.Errorf("gate on an A/A study: exit %d\nstdout %s\nstderr %s", code, stdout, stderr)
	}
}
