package study

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/wirebench/wirebench/internal/testkit"
	"github.com/wirebench/wirebench/results"
)

// A study file compares two servers on one recording (replay: as a
// cell's load, the same schedule for both) and runs a flow cell; the
// server that spins 1 ms per response is the slower on the recording.
func TestStudyFileReplayAndFlowCells(t *testing.T) {
	if testing.Short() {
		t.Skip("starts servers and runs load; skipped with -short")
	}
	bin, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	var rec strings.Builder
	t0 := 1764400000.0
	for i := range 200 { // 200 requests over 1 s, two endpoints
		fmt.Fprintf(&rec, `{"time": %.4f, "method": "GET", "path": "/item/%d", "status": 200}`+"\n", t0+float64(i)*0.005, i%2)
	}
	files := map[string]string{
		"rec.jsonl": rec.String(),
		"f.yaml":    "flow:\n  - get:\n      name: first\n      url: /a/{{.N}}\n  - think: 1ms\n  - get:\n      name: second\n      url: /b\n      check:\n        - header: Content-Type\n          contains: text\n",
		"study.yaml": strings.ReplaceAll(`
name: rec
trials: 2
warmup: 100ms
duration: 600ms
server:
  env: {`+testServerEnv+`: "1"}
cells:
  - name: fast
    server: {command: ["{bin}", "-addr", "127.0.0.1:{port}"], ready: "tcp://127.0.0.1:{port}"}
    load: {url: "http://127.0.0.1:{port}/", replay: rec.jsonl, loop: true, concurrency: 16}
  - name: slow
    server: {command: ["{bin}", "-addr", "127.0.0.1:{port}", "-burn", "1ms"], ready: "tcp://127.0.0.1:{port}"}
    load: {url: "http://127.0.0.1:{port}/", replay: rec.jsonl, loop: true, concurrency: 16}
  - name: flow
    server: {command: ["{bin}", "-addr", "127.0.0.1:{port}"], ready: "tcp://127.0.0.1:{port}"}
    load: {url: "http://127.0.0.1:{port}/", flow: f.yaml, concurrency: 2}
`, "{bin}", bin),
	}
	for name, text := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	def, err := ParseFile(filepath.Join(dir, "study.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	res, err := Run(ctx, def, Options{Seed: 1, Ports: testPorts()})
	if err != nil {
		t.Fatal(err)
	}
	p50 := map[string][]time.Duration{}
	reqs := map[string][]int64{}
	for _, tr := range res.Trials {
		if tr.Error != "" {
			t.Fatalf("trial %s %d: %s", tr.Cell, tr.Index, tr.Error)
		}
		l := tr.Load
		if l.Failed != 0 || l.Requests == 0 {
			t.Fatalf("trial %s %d: %d of %d failed: %v", tr.Cell, tr.Index, l.Failed, l.Requests, l.Failures)
		}
		p50[tr.Cell] = append(p50[tr.Cell], l.Latency.Quantile(.5))
		reqs[tr.Cell] = append(reqs[tr.Cell], l.Requests)
		switch tr.Cell {
		case "rec/flow":
			if l.Scenario != "flow" || l.Iterations == nil || l.Iterations.Count == 0 || len(l.Ops) != 2 || l.Ops[1].Requests != l.Iterations.Count {
				t.Fatalf("flow trial: scenario %s, iterations %+v, ops %+v", l.Scenario, l.Iterations, l.Ops)
			}
		default:
			// 600 ms of a 200/s recording: the same schedule for both (a
			// busy machine may drop late arrivals: the floor is timing).
			if l.Scenario != "replay" || l.Requests > 125 || testkit.Timing() && l.Requests < 100 {
				t.Fatalf("trial %s: scenario %s, %d requests, want about 120 (the recording's schedule)", tr.Cell, l.Scenario, l.Requests)
			}
		}
	}
	// Which server answered faster is a wall-clock measurement: timing.
	for i := range p50["rec/slow"] {
		if testkit.Timing() && p50["rec/slow"][i] < p50["rec/fast"][i]+500*time.Microsecond {
			t.Errorf("p50 slow %v, fast %v: the 1-ms server is not the slower on the recording", p50["rec/slow"], p50["rec/fast"])
		}
	}
	t.Logf("p50 fast %v slow %v; requests %v", p50["rec/fast"], p50["rec/slow"], reqs)
	_ = results.LoadSchema
}

// A flow or replay load with a problem is an error of the study file,
// with the flow file's own line.
func TestStudyFileFlowErrors(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "f.yaml"), []byte("flow:\n  - get:\n      url: /a/{{.idd}}\n"), 0o644)
	cases := []struct{ load, want string }{
		{`{url: "http://127.0.0.1:{port}/", flow: f.yaml}`, "f.yaml:3: step 1: url: {{.idd}} is not a variable here"},
		{`{url: "http://127.0.0.1:{port}/", flow: f.yaml, replay: r.har}`, "flow and replay exclude each other"},
		{`{url: "http://127.0.0.1:{port}/", replay: r.har, rate: 10}`, "a replay's schedule is the recording's"},
		{`{url: "http://127.0.0.1:{port}/", flow: f.yaml, method: POST}`, "a flow names its own requests"},
		{`{url: "http://127.0.0.1:{port}/", replay: nothere.har}`, "nothere.har"},
	}
	for _, tc := range cases {
		text := "name: x\nserver: {command: [./srv, \"{port}\"]}\nload: " + tc.load + "\ncells: [{name: a}]\n"
		_, err := Parse(filepath.Join(dir, "s.yaml"), []byte(text), os.ReadFile)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: error %v, want %q", tc.load, err, tc.want)
		}
	}
}
