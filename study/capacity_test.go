package study

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/wirebench/wirebench/capacity"
	"github.com/wirebench/wirebench/internal/cpuquota"
	"github.com/wirebench/wirebench/internal/testkit"
	"github.com/wirebench/wirebench/load/browser"
	"github.com/wirebench/wirebench/report"
	"github.com/wirebench/wirebench/results"
)

const capacityFile = `name: cap
measure: capacity
slo: ["p99<20ms", "errors<0.1%"]
capacity: {max_rate: 20000, precision: 0.1, step_duration: 3s}
load: {url: "http://127.0.0.1:{port}/", method: GET}
cells:
  - name: a
    server: {command: ["./srv", "-addr", "127.0.0.1:{port}"]}
`

func TestParseCapacity(t *testing.T) {
	t.Parallel()
	def, err := Parse("/x/cap.yaml", []byte(capacityFile), noFiles)
	if err != nil {
		t.Fatal(err)
	}
	co := def.Cells[0].Capacity
	if co == nil || len(co.SLO) != 2 || co.SLO[0].Expr != "p99<20ms" || co.MaxRate != 20000 || co.Precision != 0.1 || co.StepDuration != 3*time.Second {
		t.Fatalf("capacity options %+v", co)
	}
	plain, err := Parse("/x/core.yaml", []byte(core), noFiles)
	if err != nil || plain.Cells[0].Capacity != nil {
		t.Fatalf("a study without measure: capacity measures throughput: %v %+v", err, plain.Cells[0].Capacity)
	}
}

func TestParseCapacityErrors(t *testing.T) {
	t.Parallel()
	rest := "load: {url: \"http://h/\"}\ncells:\n  - name: a\n    server: {command: [./srv]}\n"
	for _, tc := range []struct{ name, file, want string }{
		{"unknown measure", "measure: speed\n" + rest, `s.yaml:1: measure: "speed": want throughput`},
		{"slo without capacity", "slo: [p99<1s]\n" + rest, `s.yaml:1: slo: applies to measure: capacity`},
		{"no slo", "measure: capacity\n" + rest, `s.yaml:1: measure: capacity needs slo`},
		{"bad slo", "measure: capacity\nslo: [p99]\n" + rest, `s.yaml:2: slo: "p99" (want e.g. p99<50ms`},
		{"rps slo", "measure: capacity\nslo: [rps>5]\n" + rest, `s.yaml:2: rps>5: the rate is what the search finds`},
		{"bad precision", "measure: capacity\nslo: [p99<1s]\ncapacity: {precision: 5}\n" + rest, `s.yaml:3: precision 5: want a fraction`},
		{"unknown capacity field", "measure: capacity\nslo: [p99<1s]\ncapacity: {max: 5}\n" + rest, `unknown field "max" in capacity`},
		{"rate in load", "measure: capacity\nslo: [p99<1s]\nload: {url: \"http://h/\", rate: 100}\ncells:\n  - name: a\n    server: {command: [./srv]}\n",
			`s.yaml:3: load: rate, requests, stages and open are the search's to set`},
		{"negative cpu_quota", "measure: capacity\nslo: [p99<1s]\nload: {url: \"http://h/\"}\ncells:\n  - name: a\n    server: {command: [./srv], cpu_quota: -1}\n",
			`s.yaml:6: cells[0] (a).server.cpu_quota: -1: want CPUs such as 0.5`},
		{"rate in a cell", "measure: capacity\nslo: [p99<1s]\n" + rest + "    load: {requests: 10}\n",
			`s.yaml:7: cells[0] (a).load: rate, requests, stages and open are the search's to set`},
	} {
		_, err := Parse("s.yaml", []byte(tc.file), noFiles)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: err %v, want %q", tc.name, err, tc.want)
		}
	}
}

// TestCapacityStudyKnownRatio is a study of two servers whose capacities
// differ by a known ratio: each spins the CPU for a fixed time per
// response (1 ms and 2 ms) on its own CPU, so one carries at most 1000/s
// and the other 500/s. The SLO is on p90: a 500 ms step at 100/s has 50
// requests, whose p99 is their slowest, and one scheduling hiccup on a
// busy machine failed a 1 ms server at 100/s (twice, 2026-11-27 17:00 and
// 17:15); p90 rests on the five slowest. The measured ratio must be near ½ — generous
// bounds, for a shared, busy machine — and the report's finding must
// compare capacities in one line. One trial a cell: each search takes
// about 10 s, and a second pair checked the same ratio again (a cell's
// later trials under a lowered quota: TestCapacityStudyLowersQuotaOnClientLimit).
func TestCapacityStudyKnownRatio(t *testing.T) {
	def := writeStudy(t, `
name: capratio
trials: 1
measure: capacity
slo: ["p90<50ms"]
capacity: {start_rate: 100, max_rate: 4000, precision: 0.1, step_duration: 500ms, step_warmup: 200ms, confirm_duration: 500ms}
server:
  env: {`+testServerEnv+`: "1"}
load: {url: "http://127.0.0.1:{port}/", method: GET, expect_body_contains: "ok"}
cells:
  - name: fast
    server: {command: ["{bin}", "-addr", "127.0.0.1:{port}", "-burn", "1ms"], ready: "tcp://127.0.0.1:{port}"}
  - name: slow
    server: {command: ["{bin}", "-addr", "127.0.0.1:{port}", "-burn", "2ms"], ready: "tcp://127.0.0.1:{port}"}
`)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	res, err := Run(ctx, def, Options{Seed: 5})
	if err != nil {
		t.Fatal(err)
	}
	// What must hold however busy the machine: no search answers above
	// what one CPU can serve at the server's cost (within the 10%
	// precision), the per-request CPU gives the cost ratio, and the report
	// compares the capacities in one line. The capacities' own ratio is
	// checked only when every search stopped on the SLO: on a box loaded
	// far past its CPUs (load average 21 on 2, 2026-11-27 15:40) searches
	// end with "the client was the limit" at 12/s — which they must say,
	// and do, rather than blame the server.
	rates, cpu := map[string][]float64{}, map[string][]time.Duration{}
	allSLO := true
	limit := map[string]float64{"capratio/fast": 1000 * 1.1, "capratio/slow": 500 * 1.1}
	for _, tr := range res.Trials {
		if tr.Error != "" || tr.Capacity == nil || len(tr.Capacity.Steps) == 0 {
			t.Fatalf("trial %s/%d: error %q, capacity %v", tr.Cell, tr.Index, tr.Error, tr.Capacity != nil)
		}
		c := tr.Capacity
		t.Logf("%s trial %d: %s in %d steps, server CPU/req %v", tr.Cell, tr.Index, results.CapacityLine(c), len(c.Steps), c.ServerCPUPerRequest)
		if c.Rate > limit[tr.Cell] {
			t.Errorf("%s: %.0f/s, more than one CPU can serve at its cost (%.0f/s)", tr.Cell, c.Rate, limit[tr.Cell])
		}
		if a := c.Answer(); a != nil && tr.Load != a.Load {
			t.Errorf("%s: the trial's load is not the answer's run", tr.Cell)
		}
		if c.ServerCPUPerRequest > 0 {
			cpu[tr.Cell] = append(cpu[tr.Cell], c.ServerCPUPerRequest)
		}
		allSLO = allSLO && c.Limit == results.LimitSLO
		rates[tr.Cell] = append(rates[tr.Cell], c.Rate)
	}
	fast, slow := rates["capratio/fast"], rates["capratio/slow"]
	if len(fast) != 1 || len(slow) != 1 {
		t.Fatalf("rates %v", rates)
	}
	if f, s := cpu["capratio/fast"], cpu["capratio/slow"]; len(f) > 0 && len(s) > 0 {
		if r := float64(slices.Min(f)) / float64(slices.Max(s)); r < 0.3 || r > 0.7 {
			t.Errorf("server CPU per request %v (fast) and %v (slow): ratio %.2f, want near 0.5", f, s, r)
		}
	}
	// Capacities measured from the wall clock: a CPU hog beside the suite
	// made a 1 ms server's p99 miss the SLO at 92/s (2026-11-27 17:00), so
	// their ratio is a timing check (the quiet step), as are percentiles.
	if allSLO && testkit.Timing() {
		for i := range fast {
			// Measured: 1,037/s and 519/s in both trials (13:50), 951/s and
			// 519/s, 436/s (14:05).
			if r := slow[i] / fast[i]; r < 0.3 || r > 0.8 {
				t.Errorf("trial %d: fast %.0f/s, slow %.0f/s: ratio %.2f, want near 0.5", i, fast[i], slow[i], r)
			}
		}
	} else {
		t.Logf("capacity ratio not checked (every search on the SLO: %v; WIREBENCH_TIMING=1: %v)", allSLO, testkit.Timing())
	}
	fs := report.Build(res).Groups[0].Findings()
	if len(fs) == 1 && !testkit.Timing() && strings.Contains(fs[0].Text, "cannot answer") &&
		(strings.Contains(fs[0].Text, "disturbed") || strings.Contains(fs[0].Text, "the client was the limit")) {
		// On a busy machine the searches know they were disturbed and the
		// finding says it cannot answer: the honest outcome there.
		t.Logf("finding on a busy machine: %s", fs[0].Text)
		return
	}
	if len(fs) != 1 || !strings.Contains(fs[0].Text, "slow carries") || !strings.Contains(fs[0].Text, "fast's load at p90<50ms") {
		t.Errorf("findings %+v", fs)
	}
}

func TestWithCapacity(t *testing.T) {
	t.Parallel()
	def, err := Parse("/x/core.yaml", []byte(core), noFiles)
	if err != nil {
		t.Fatal(err)
	}
	cells := append(def.Cells, Cell{Label: "page", Load: LoadSpec{Browser: &browser.Options{}}})
	co := &capacity.Options{SLO: slo(t, "p99<20ms")}
	got := withCapacity(cells, co)
	if got[0].Capacity != co || got[1].Capacity != co || got[2].Capacity != nil {
		t.Errorf("capacity per cell: %v %v %v; want the two servers, not the browser page", got[0].Capacity, got[1].Capacity, got[2].Capacity)
	}
	if cells[0].Capacity != nil {
		t.Error("withCapacity changed the definition's cells")
	}
	if withCapacity(cells, nil)[0].Capacity != nil {
		t.Error("no options: cells should keep measuring throughput")
	}
}

func slo(t *testing.T, exprs ...string) []results.Threshold {
	t.Helper()
	var out []results.Threshold
	for _, e := range exprs {
		th, err := results.ParseThreshold(e)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, th)
	}
	return out
}

// A server given half a CPU serves no more than half a CPU's worth: at
// 1 ms of CPU per response, 500/s (the quota is a cap, so this holds on a
// busy machine too; without it the server could answer up to 1000/s).
// The trials and the search record the quota, and its cgroup is gone
// after the study.
func TestCapacityStudyServerQuota(t *testing.T) {
	if _, err := cpuquota.RemoveStale(); err != nil {
		t.Skipf("no CPU quota here: %v", err)
	}
	def := writeStudy(t, `
name: capquota
trials: 1
measure: capacity
slo: ["p90<50ms"]
capacity: {start_rate: 200, growth: 2, max_rate: 4000, precision: 0.1, step_duration: 500ms, step_warmup: 200ms, confirm_duration: 500ms}
server:
  env: {`+testServerEnv+`: "1"}
load: {url: "http://127.0.0.1:{port}/", method: GET, expect_body_contains: "ok"}
cells:
  - name: half
    server: {command: ["{bin}", "-addr", "127.0.0.1:{port}", "-burn", "1ms"], ready: "tcp://127.0.0.1:{port}", cpu_quota: 0.5}
`)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	res, err := Run(ctx, def, Options{Seed: 5})
	if err != nil {
		t.Fatal(err)
	}
	tr := res.Trials[0]
	if tr.Error != "" || tr.Capacity == nil {
		t.Fatalf("trial: %q", tr.Error)
	}
	c := tr.Capacity
	t.Logf("%s, steps %d", results.CapacityLine(c), len(c.Steps))
	q := tr.ServerQuota
	if q == nil || q.Cores != 0.5 || q.Period != 2*time.Millisecond || q.Source != results.QuotaStudyFile || c.ServerQuota != q {
		t.Fatalf("quota %+v (search %+v)", q, c.ServerQuota)
	}
	for _, s := range c.Steps {
		// CFS enforces a 2-ms period's quota loosely (per-CPU runtime
		// slices; 596/s seen beside two CPU hogs): a cap within 30%, far
		// below the 1000/s per CPU the server would serve without it.
		if s.Achieved > 500*1.3 {
			t.Errorf("step at %.0f/s completed %.0f/s: more than half a CPU serves at 1 ms per request", s.Offered, s.Achieved)
		}
	}
	if c.Rate > 500*1.3 {
		t.Errorf("capacity %.0f/s above the quota's 500/s", c.Rate)
	}
	if pc := c.PerCore(); pc != c.Rate*2 {
		t.Errorf("per core %.0f/s, want twice %.0f/s", pc, c.Rate)
	}
	left, _ := filepath.Glob(fmt.Sprintf("/sys/fs/cgroup/*/wirebench-%d-*", os.Getpid()))
	left2, _ := filepath.Glob(fmt.Sprintf("/sys/fs/cgroup/wirebench-%d-*", os.Getpid()))
	if len(left)+len(left2) > 0 {
		t.Errorf("cgroups left after the study: %v %v", left, left2)
	}
}

// A search that ends on the client's limit measured the client, not the
// server: the study runs that trial again under a lower quota of its own
// choosing (twice at most), keeps the lowered quota for the cell, and
// says so. One worker in flight against a 2-ms server makes every search
// end on the client's limit (arrivals wait for the worker while the
// service time meets the SLO), however low the quota: so both lowerings
// run, and the trial kept is the last one's.
func TestCapacityStudyLowersQuotaOnClientLimit(t *testing.T) {
	if _, err := cpuquota.RemoveStale(); err != nil {
		t.Skipf("no CPU quota here: %v", err)
	}
	def := writeStudy(t, `
name: caplower
trials: 1
measure: capacity
slo: ["p90<50ms"]
capacity: {start_rate: 100, max_rate: 3200, precision: 0.5, step_duration: 300ms, step_warmup: 100ms, confirm_duration: 300ms, max_time: 20s}
server:
  env: {`+testServerEnv+`: "1"}
load: {url: "http://127.0.0.1:{port}/", method: GET, expect_body_contains: "ok", concurrency: 1}
cells:
  - name: one-worker
    server: {command: ["{bin}", "-addr", "127.0.0.1:{port}", "-burn", "2ms"], ready: "tcp://127.0.0.1:{port}"}
`)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	var progress []string
	res, err := Run(ctx, def, Options{Seed: 5, Progress: func(s string) { progress = append(progress, s) }})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Trials) != 1 {
		t.Fatalf("%d trials kept, want the last run's only", len(res.Trials))
	}
	tr := res.Trials[0]
	if tr.Error != "" || tr.Capacity == nil {
		t.Fatalf("trial: %q", tr.Error)
	}
	t.Logf("%s; quota %+v", results.CapacityLine(tr.Capacity), tr.ServerQuota)
	if tr.Capacity.Limit != results.LimitClient {
		t.Skipf("the search ended on %q, not the client's limit: nothing to lower", tr.Capacity.Limit)
	}
	var lowered []string
	for _, w := range res.Warnings {
		if strings.Contains(w, "search ended on the client's limit") {
			lowered = append(lowered, w)
		}
	}
	if len(lowered) != maxLowerings {
		t.Fatalf("warnings %q: want %d lowerings", res.Warnings, maxLowerings)
	}
	q := tr.ServerQuota
	if q == nil || q.Source != results.QuotaLowered || q.LoweredFrom <= q.Cores || tr.Capacity.ServerQuota != q {
		t.Fatalf("the kept trial's quota %+v (search's %+v): want one lowered by the study", q, tr.Capacity.ServerQuota)
	}
	if !strings.Contains(lowered[1], fmt.Sprintf("under a quota of %s CPU", strconv.FormatFloat(q.LoweredFrom, 'f', -1, 64))) ||
		!strings.HasSuffix(lowered[1], fmt.Sprintf("under %s CPU", strconv.FormatFloat(q.Cores, 'f', -1, 64))) {
		t.Errorf("second lowering %q does not name %g → %g", lowered[1], q.LoweredFrom, q.Cores)
	}
	if !slices.Contains(progress, lowered[0]) {
		t.Errorf("progress %q lacks %q", progress, lowered[0])
	}
}
