package study

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/wirebench/wirebench/internal/testkit"
	"github.com/wirebench/wirebench/load/scenario"
)

// TestKVStudyDefinition pins the study's shape: the seed's settings in
// every cell, Redis and wirebench RESP at the three persistence settings
// per operation, HTTP raw and JSON at AOF everysec, Redis the baseline of
// every group, and redis-benchmark beside each Redis cell only.
func TestKVStudyDefinition(t *testing.T) {
	def, err := Lookup("kv")
	if err != nil {
		t.Fatal(err)
	}
	if err := validate(def); err != nil {
		t.Fatal(err)
	}
	if len(def.Cells) != 16+2 || def.Notes == nil { // + kv_repl.go's two
		t.Fatalf("%d cells (want 18), notes %v", len(def.Cells), def.Notes != nil)
	}
	groups := map[string][]string{}
	for i, c := range def.Cells {
		if c.Group == kvReplGroup {
			continue // kv_repl_test.go
		}
		groups[c.Group] = append(groups[c.Group], c.Label)
		k := c.Load.KV
		if k == nil || k.Keys != 10000 || k.ValueSize != 128 || c.Load.Options.Concurrency != 50 || k.Pipeline != 1 {
			t.Errorf("%s: not the seed's settings: %+v %+v", c.ID(), k, c.Load.Options)
			continue
		}
		if want := map[string]string{"SET": scenario.ScenarioKVSet, "GET": scenario.ScenarioKVGet}[strings.Split(c.Group, ",")[0]]; k.Name != want {
			t.Errorf("%s: scenario %s, want %s", c.ID(), k.Name, want)
		}
		cmd := strings.Join(c.Server.Command, " ")
		persist := strings.SplitN(c.Group, ", ", 2)[1]
		hasBench := slices.ContainsFunc(c.Checks, func(ch Check) bool { return strings.HasPrefix(ch.Name, "redis-benchmark") })
		switch {
		case c.Label == "Redis":
			if !isBaseline(def.Cells, i) || !hasBench || k.Protocol != scenario.ProtocolRESP {
				t.Errorf("%s: baseline %v, redis-benchmark %v, protocol %s", c.ID(), isBaseline(def.Cells, i), hasBench, k.Protocol)
			}
			want := map[string]string{"no persistence": "--appendonly no", "AOF everysec": "--appendonly yes --appendfsync everysec", "AOF always": "--appendonly yes --appendfsync always"}[persist]
			if !strings.Contains(cmd, want) || !strings.Contains(cmd, "--save  ") {
				t.Errorf("%s: command %q lacks %q and --save ''", c.ID(), cmd, want)
			}
		default:
			// redis-benchmark runs against our RESP cells too (its figures
			// beside ours on both servers); never against /kv over HTTP.
			if hasBench != strings.Contains(c.Label, "RESP") || !strings.Contains(cmd, "{wirebench} serve") {
				t.Errorf("%s: command %q, redis-benchmark %v", c.ID(), cmd, hasBench)
			}
			want := map[string]string{"no persistence": "", "AOF everysec": "--appendfsync everysec", "AOF always": "--appendfsync always"}[persist]
			if (want == "") == strings.Contains(cmd, "--data-dir") || !strings.Contains(cmd, want) {
				t.Errorf("%s: command %q, want %q", c.ID(), cmd, want)
			}
			if strings.Contains(c.Label, "RESP") != strings.Contains(cmd, "--resp 127.0.0.1:{port}") {
				t.Errorf("%s: command %q", c.ID(), cmd)
			}
		}
	}
	for g, labels := range groups {
		want := []string{"Redis", "wirebench RESP"}
		if strings.HasSuffix(g, "AOF everysec") {
			want = append(want, "wirebench HTTP raw", "wirebench HTTP JSON")
		}
		if !slices.Equal(labels, want) {
			t.Errorf("group %s: %v, want %v", g, labels, want)
		}
	}
	if len(groups) != 6 {
		t.Errorf("%d groups, want 6", len(groups))
	}
}

// TestKVStudyQuickRedis runs the study's Redis cells (and wirebench's,
// when the binary serves RESP) for one tiny trial each against a real
// redis-server the study starts: every trial succeeds, redis-benchmark's
// rate is recorded beside ours, the AOF cell wrote to its data directory
// and removed it, and the report holds the seed's tables with our rows.
func TestKVStudyQuickRedis(t *testing.T) {
	testkit.NeedPeers(t) // slow: CI's peer step (docs/testing.md)
	testkit.NeedTool(t, "redis-server", "apt-get install -y redis-server")
	testkit.NeedTool(t, "redis-benchmark", "apt-get install -y redis-tools")
	bin := testkit.Binary(t)
	help, _ := exec.Command(bin, "serve", "-h").CombinedOutput()
	withWirebench := strings.Contains(string(help), "-resp") && strings.Contains(string(help), "-data-dir")
	def, _ := Lookup("kv")
	var cells []Cell
	for _, c := range def.Cells {
		switch {
		case c.Label == "Redis" && (strings.HasSuffix(c.Group, "no persistence") || c.Group == "SET, AOF always"):
		case withWirebench && c.Label != "Redis" && (c.Group == "GET, no persistence" || c.Group == "SET, AOF everysec"):
		default:
			continue
		}
		cells = append(cells, c)
	}
	if !withWirebench {
		t.Log("this wirebench has no serve --resp/--data-dir yet (kvserver branch): Redis cells only")
	}
	def.Cells = cells
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	// Directories other runs left (their ports may come round again)
	// are not this run's.
	kvDirs := filepath.Join(os.TempDir(), "wirebench-study-kv", "*")
	before, _ := filepath.Glob(kvDirs)
	res, err := Run(ctx, def, Options{Quick: true, Trials: 1, Warmup: 100 * time.Millisecond, Duration: 300 * time.Millisecond, Seed: 3, Binary: bin, Ports: testPorts(),
		Progress: func(s string) { t.Log(s) }})
	if err != nil {
		t.Fatal(err)
	}
	for _, w := range res.Warnings {
		if strings.Contains(w, "child processes") {
			t.Errorf("the sampler measured a wrapper, not the server: %s", w)
		}
	}
	for _, tr := range res.Trials {
		if tr.Error != "" {
			t.Fatalf("%s: %s", tr.Cell, tr.Error)
		}
		if tr.Load.Failed != 0 || tr.Load.Requests == 0 {
			t.Errorf("%s: %d of %d failed %v", tr.Cell, tr.Load.Failed, tr.Load.Requests, tr.Load.Failures)
		}
		op := strings.Split(tr.Cell, ",")[0]
		if strings.HasSuffix(tr.Cell, "/Redis") && tr.External["redis-benchmark "+op+" rps"] <= 0 {
			t.Errorf("%s: no redis-benchmark rate recorded: %v %+v", tr.Cell, tr.External, tr.Checks)
		}
		if strings.HasSuffix(tr.Cell, "/Redis") && (tr.External[kvBenchCPUPerReq(op)] <= 0 || tr.External[kvBenchCPUShare(op)] <= 0) {
			t.Errorf("%s: redis-benchmark's CPU not recorded: %v", tr.Cell, tr.External)
		}
		if aof := strings.Contains(tr.Cell, "AOF"); aof != (tr.External["data dir bytes"] > 0) {
			t.Errorf("%s: data dir bytes %v", tr.Cell, tr.External["data dir bytes"])
		}
	}
	leftovers, _ := filepath.Glob(kvDirs)
	for _, tr := range res.Trials {
		for _, l := range leftovers {
			if len(tr.Ports) > 0 && strings.HasSuffix(l, "-"+strconv.Itoa(tr.Ports[0])) && !slices.Contains(before, l) {
				t.Errorf("data directory %s left behind", l)
			}
		}
	}
	if len(res.Notes) != 1 {
		t.Fatalf("%d notes", len(res.Notes))
	}
	n := res.Notes[0]
	for _, want := range []string{"259067.36", "20375.35", "| Redis, no persistence | wirebench | ", "| Redis, no persistence | redis-benchmark (same trials) | ",
		"Which comparisons are like for like", "The two clients on the same Redis trials", "| SET | no persistence | "} {
		if !strings.Contains(n, want) {
			t.Errorf("notes lack %q:\n%s", want, n)
		}
	}
	if strings.Contains(n, "| Redis, no persistence | wirebench | – |") {
		t.Errorf("no SET rate for Redis:\n%s", n)
	}
}

// TestKVStudyWithoutRedis: where redis-server is not installed, the
// Redis trials fail saying what to install (and the study warns).
func TestKVStudyWithoutRedis(t *testing.T) {
	sh, err := exec.LookPath("sh")
	if err != nil {
		t.Skip("no sh")
	}
	bin := t.TempDir() // a PATH with sh and nothing else
	if err := os.Symlink(sh, filepath.Join(bin, "sh")); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", bin)
	def, _ := Lookup("kv")
	if !slices.ContainsFunc(def.Warnings, func(w string) bool { return strings.Contains(w, "apt-get install redis-server redis-tools") }) {
		t.Errorf("no warning naming the packages: %v", def.Warnings)
	}
	def.Cells = def.Cells[:1] // SET, no persistence: Redis
	res, err := Run(context.Background(), def, Options{Trials: 1, Warmup: -1, Duration: 100 * time.Millisecond, Seed: 1, Binary: "/nonexistent"})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Trials) != 1 || !strings.Contains(res.Trials[0].Error, "redis-server is not installed: apt-get install redis-server redis-tools") {
		t.Fatalf("trials %+v", res.Trials)
	}
}

// TestKVClientCheck: the client table shows both clients' CPU, and says
// that redis-benchmark set its own rate only where it kept its CPU busy.
func TestKVClientCheck(t *testing.T) {
	st := []kvCellStats{{op: "SET", persistence: "no persistence", label: "Redis", trials: 2, rps: []float64{134000, 136000}, benchRPS: []float64{86000, 86000},
		cpuPerReq: []float64{7300, 7300}, cpuShare: []float64{0.98, 0.98}, benchCPUPerReq: []float64{11300, 11300}, benchCPUShare: []float64{0.97, 0.97}}}
	got := kvClientCheck(st)
	for _, want := range []string{"| SET | no persistence | 135.0k [134–136k] | 7.300µs [all equal] | 98.00 [all equal] | 86.00k [all equal] | 11.30µs [all equal] | 97.00 [all equal] |", "it, not Redis, set its rate"} {
		if !strings.Contains(got, want) {
			t.Errorf("lacks %q:\n%s", want, got)
		}
	}
	st[0].benchCPUShare = []float64{0.5, 0.5}
	if got := kvClientCheck(st); strings.Contains(got, "it, not Redis, set its rate") || !strings.Contains(got, "not by its own CPU cost") {
		t.Errorf("a half-busy redis-benchmark called the bottleneck:\n%s", got)
	}
	st[0].benchCPUShare, st[0].benchCPUPerReq = nil, nil // not measured
	if got := kvClientCheck(st); !strings.Contains(got, "| 86.00k [all equal] | – | – |") {
		t.Errorf("unmeasured CPU not shown as –:\n%s", got)
	}
}
