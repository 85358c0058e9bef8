package study

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/wirebench/wirebench/report"
	"github.com/wirebench/wirebench/results"
)

// testPorts is where the studies in these tests bind their servers: a
// range below the kernel's ephemeral ports (32768–60999 on Linux), which
// every other test's 127.0.0.1:0 listener and outgoing connection take
// from. A study releases a free port before its server binds it; from
// the ephemeral range, a neighbour test took one in between ("bind:
// address already in use"). One range per test process, by pid.
func testPorts() PortRange {
	lo := 20000 + os.Getpid()%100*100
	return PortRange{Lo: lo, Hi: lo + 99}
}

// writeStudy writes a study file whose {bin} is this test binary (a tiny
// server, see TestMain) and parses it.
func writeStudy(t *testing.T, text string) Definition {
	t.Helper()
	if testing.Short() {
		t.Skip("starts servers and runs load; skipped with -short")
	}
	bin, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "study.yaml")
	if err := os.WriteFile(path, []byte(strings.ReplaceAll(text, "{bin}", bin)), 0o644); err != nil {
		t.Fatal(err)
	}
	def, err := ParseFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return def
}

// TestStudyFileFindsTheSlowerServer is the A/B a user runs: two servers
// in the core schema, one spinning 1 ms of CPU per response, four short
// interleaved trials each. The report must call the slow one significantly
// slower, and each cell's memory must come from its own process (the slow
// server holds a 64 MiB ballast the fast one does not).
//
// Four trials per cell is the fewest at which the Mann-Whitney test can
// reach p ≤ 0.05 (fully separated samples give p = 2/C(8,4) ≈ 0.029). The
// margin is wide: pinned to one CPU the fast server answered 10k-45k req/s
// on our shared 2-core box even under heavy load from other jobs, and the
// slow one cannot exceed 1/1ms = 1000, so the samples do not overlap.
func TestStudyFileFindsTheSlowerServer(t *testing.T) {
	def := writeStudy(t, `
name: e2e
trials: 4
warmup: 200ms
duration: 700ms
server:
  env: {`+testServerEnv+`: "1"}
load: {url: "http://127.0.0.1:{port}/", method: GET, concurrency: 4, expect_body_contains: "ok"}
cells:
  - name: fast
    server: {command: ["{bin}", "-addr", "127.0.0.1:{port}"], ready: "http://127.0.0.1:{port}/"}
  - name: slow
    server: {command: ["{bin}", "-addr", "127.0.0.1:{port}", "-burn", "1ms", "-ballast", "64"], ready: "tcp://127.0.0.1:{port}"}
`)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	res, err := Run(ctx, def, Options{Seed: 3, Ports: testPorts()})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Trials) != 8 {
		t.Fatalf("%d trials, want 8", len(res.Trials))
	}
	pids := map[int]bool{}
	rss := map[string][]int64{}
	for _, tr := range res.Trials {
		if tr.Error != "" {
			t.Fatalf("trial %s %d: %s", tr.Cell, tr.Index, tr.Error)
		}
		if tr.ServerPID == 0 || pids[tr.ServerPID] {
			t.Fatalf("trial %s %d: server PID %d not fresh", tr.Cell, tr.Index, tr.ServerPID)
		}
		pids[tr.ServerPID] = true
		if len(tr.Ports) != 1 || tr.Load.Failed != 0 {
			t.Fatalf("trial %s %d: ports %v, %d of %d requests failed: %v", tr.Cell, tr.Index, tr.Ports, tr.Load.Failed, tr.Load.Requests, tr.Load.Failures)
		}
		if srv := res.Options.ServerCPUs; len(srv) > 0 && !slices.Equal(tr.ServerCPUs, srv) {
			t.Errorf("trial %s %d: server runs on CPUs %v, want %v", tr.Cell, tr.Index, tr.ServerCPUs, srv)
		}
		rss[tr.Cell] = append(rss[tr.Cell], tr.Server.PeakRSS)
	}
	// 64 MiB of ballast, touched: the slow server's smallest peak must
	// exceed the fast one's largest by most of it.
	if lo, hi := slices.Min(rss["e2e/slow"]), slices.Max(rss["e2e/fast"]); lo < hi+48<<20 {
		t.Errorf("peak RSS slow %v, fast %v: not each from its own process", rss["e2e/slow"], rss["e2e/fast"])
	}
	rep := report.Build(res)
	if len(rep.Groups) != 1 || rep.Groups[0].Cells[0].Cell.Label != "fast" || !rep.Groups[0].Cells[0].Cell.Baseline {
		t.Fatalf("groups: %+v", rep.Groups)
	}
	d, ok := rep.Groups[0].VsBaseline(1, "rps")
	if !ok || !d.Significant() || d.New.Center >= d.Old.Center {
		t.Fatalf("slow vs fast req/s: %v (fast %v, slow %v)", d, d.Old.Center, d.New.Center)
	}
	t.Logf("slow vs fast: req/s %v; medians %.0f vs %.0f", d, d.New.Center, d.Old.Center)
	if bad := Unsuccessful(res); len(bad) != 0 {
		t.Errorf("unsuccessful: %v", bad)
	}
}

// TestStudyFileChecksExternalAndFailures covers the rest of a study file
// in one short run: a check command that passes and one that fails the
// trial, a server already running (not sampled, and the results say so), a
// server that cannot start, one that crashes during the load, one behind
// a shell (sampled PID has children: a warning), a check over its timeout
// and a server never ready within its ready_timeout.
func TestStudyFileChecksExternalAndFailures(t *testing.T) {
	ext := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { fmt.Fprintln(w, "ok") }))
	defer ext.Close()
	def := writeStudy(t, `
name: mixed
trials: 1
warmup: 0s
duration: 300ms
server:
  command: ["{bin}", "-addr", "127.0.0.1:{port}"]
  env: {`+testServerEnv+`: "1"}
  ready_timeout: 5s
load: {url: "http://127.0.0.1:{port}/", concurrency: 2}
check: {command: ["sh", "-c", "echo checked port {port}"]}
cells:
  - name: checked
  - name: bad-check
    check: {command: ["sh", "-c", "echo 2 rows missing; exit 4"]}
  - name: running
    url: "`+ext.URL+`/"
    check: {command: ["true"]}
  - name: no-start
    server: {command: ["{bin}", "-addr", "256.0.0.1:{port}"]}
  - name: crashes
    server: {command: ["{bin}", "-addr", "127.0.0.1:{port}", "-exit-after", "150ms"]}
  - name: wrapped
    server: {command: ["sh", "-c", "'{bin}' -addr 127.0.0.1:{port}; echo never"]}
  - name: slow-check
    check: {command: ["sleep", "5"], timeout: 200ms}
  - name: never-ready
    server: {command: ["sleep", "5"], ready: "tcp://127.0.0.1:{port}", ready_timeout: 300ms}
`)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	res, err := Run(ctx, def, Options{Seed: 1, NoPin: true, Ports: testPorts()})
	if err != nil {
		t.Fatal(err)
	}
	byCell := map[string]results.Trial{}
	for _, tr := range res.Trials {
		byCell[strings.TrimPrefix(tr.Cell, "mixed/")] = tr
	}
	if tr := byCell["checked"]; tr.Error != "" || len(tr.Checks) != 1 || !tr.Checks[0].OK ||
		tr.Checks[0].Output != fmt.Sprintf("checked port %d", tr.Ports[0]) {
		t.Errorf("checked: error %q, checks %+v", tr.Error, tr.Checks)
	}
	if tr := byCell["bad-check"]; !strings.Contains(tr.Error, "check failed") || !strings.Contains(tr.Error, "2 rows missing") ||
		len(tr.Checks) != 1 || tr.Checks[0].OK || tr.Checks[0].ExitCode != 4 {
		t.Errorf("bad-check: error %q, checks %+v", tr.Error, tr.Checks)
	}
	if tr := byCell["running"]; tr.Error != "" || tr.ServerPID != 0 || tr.Server.PeakRSS != 0 || tr.Load.Requests == 0 {
		t.Errorf("running: error %q, pid %d, rss %d, %d requests", tr.Error, tr.ServerPID, tr.Server.PeakRSS, tr.Load.Requests)
	}
	if c, _ := res.CellByID("mixed/running"); c.External == "" || c.Command != nil {
		t.Errorf("external cell recorded as %+v", c)
	}
	if !slices.ContainsFunc(res.Warnings, func(w string) bool { return strings.Contains(w, "mixed/running: server already running") }) {
		t.Errorf("no warning about the external server: %q", res.Warnings)
	}
	if tr := byCell["no-start"]; !strings.Contains(tr.Error, "exited before it was ready") {
		t.Errorf("no-start: error %q", tr.Error)
	}
	if tr := byCell["crashes"]; !strings.Contains(tr.Error, "exit status 3") {
		t.Errorf("crashes: error %q", tr.Error)
	}
	if tr := byCell["wrapped"]; tr.Error != "" || !slices.ContainsFunc(res.Warnings, func(w string) bool {
		return strings.Contains(w, "mixed/wrapped: the server process") && strings.Contains(w, "has child processes")
	}) {
		t.Errorf("wrapped: error %q; no warning about the shell's child in %q", tr.Error, res.Warnings)
	}
	if tr := byCell["slow-check"]; !strings.Contains(tr.Error, `check failed: command failed: "sleep 5" timed out after 200ms`) {
		t.Errorf("slow-check: error %q", tr.Error)
	}
	if tr := byCell["never-ready"]; !strings.Contains(tr.Error, "server not ready after 300ms (tcp://127.0.0.1:") {
		t.Errorf("never-ready: error %q", tr.Error)
	}
	bad := Unsuccessful(res)
	want := []string{"mixed/bad-check", "mixed/no-start", "mixed/crashes", "mixed/slow-check", "mixed/never-ready"}
	if len(bad) != len(want) {
		t.Fatalf("unsuccessful cells: %q, want %v", bad, want)
	}
	for i, w := range want {
		if !strings.HasPrefix(bad[i], "cell "+w+": no successful trial") {
			t.Errorf("unsuccessful[%d] = %q, want cell %s", i, bad[i], w)
		}
	}
}

// TestStudyFileBuildsOnce: the study's and the cells' builds run once
// each, in the study file's directory, before any trial; a failed build
// stops the study with the build's output. Cell b ramps an open-loop rate,
// warm-up included.
func TestStudyFileBuildsOnce(t *testing.T) {
	ext := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { fmt.Fprintln(w, "ok") }))
	defer ext.Close()
	def := writeStudy(t, `
trials: 2
warmup: 100ms
duration: 100ms
build: {command: ["sh", "-c", "echo study >> builds.log"]}
load: {url: "`+ext.URL+`/", concurrency: 1}
cells:
  - name: a
    url: "`+ext.URL+`/"
    build: {command: ["sh", "-c", "echo cell-a >> builds.log"]}
  - name: b
    url: "`+ext.URL+`/"
    load: {stages: [{duration: 150ms, target: 200}], open: true}
`)
	var lines []string
	res, err := Run(context.Background(), def, Options{NoPin: true, Ports: testPorts(), Progress: func(s string) { lines = append(lines, s) }})
	if err != nil {
		t.Fatal(err)
	}
	log, err := os.ReadFile(filepath.Join(filepath.Dir(def.Source), "builds.log"))
	if err != nil || string(log) != "study\ncell-a\n" {
		t.Fatalf("builds.log = %q, %v", log, err)
	}
	for _, tr := range res.Trials {
		if tr.Error != "" || tr.Load.Requests == 0 {
			t.Fatalf("trial %s: %q, %d requests", tr.Cell, tr.Error, tr.Load.Requests)
		}
	}
	if !strings.HasPrefix(lines[0], "build: sh -c echo study") || len(res.Trials) != 4 || res.Options.StudyFile != def.Source {
		t.Fatalf("progress %q, %d trials, options %v", lines, len(res.Trials), res.Options)
	}

	def.Builds = []Command{{Args: []string{"sh", "-c", "echo compile error; exit 2"}}}
	res, err = Run(context.Background(), def, Options{NoPin: true, Ports: testPorts()})
	if !errors.Is(err, ErrCommand) || !strings.Contains(err.Error(), "compile error") || res != nil {
		t.Fatalf("failed build: %v", err)
	}
}
