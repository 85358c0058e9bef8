package study

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/wirebench/wirebench/measure"
	"github.com/wirebench/wirebench/results"
)

// kvSynthetic is a study kv result with every cell of the definition and
// deterministic trials: rates, latencies, client CPU and (on the Redis
// cells) redis-benchmark's figures vary from trial to trial, so that
// every number has a spread to show.
func kvSynthetic(t *testing.T, trials int) *results.Study {
	t.Helper()
	def, err := Lookup("kv")
	if err != nil {
		t.Fatal(err)
	}
	res := &results.Study{Study: def.Name}
	start := time.Date(2026, 11, 27, 20, 0, 0, 0, time.UTC)
	for ci, c := range def.Cells {
		res.Cells = append(res.Cells, results.Cell{ID: c.ID(), Group: c.Group, Label: c.Label, Baseline: c.Baseline})
		op, _, _ := strings.Cut(c.Group, ", ")
		for i := range trials {
			f := 1 + 0.02*float64(i) + 0.01*float64(ci%5) // trial-to-trial spread
			h := measure.NewHistogram()
			for k := range 100 {
				h.Record(time.Duration(f * float64(200+10*k) * float64(time.Microsecond)))
			}
			l := &results.Load{Requests: int64(100_000 * f), Latency: h, Start: start, End: start.Add(time.Second),
				CPU: results.CPU{User: time.Duration(f * 600 * float64(time.Millisecond))}}
			tr := results.Trial{Cell: c.ID(), Index: i, Load: l, External: map[string]float64{}}
			if c.Label == "Redis" {
				tr.External["redis-benchmark "+op+" rps"] = 90_000 * f
				tr.External[kvBenchCPUPerReq(op)] = 11_000 * f
				tr.External[kvBenchCPUShare(op)] = 0.9 * f
			}
			if c.Group == kvReplGroup && !c.Baseline {
				tr.External[kvReplLagBytesMed] = 4096 * f
				tr.External[kvReplLagBytesMax] = 65536 * f
				tr.External[kvReplLagSecondsMax] = 0.004 * f
				tr.External[kvReplCatchUpSec] = 0.012 * f
			}
			res.Trials = append(res.Trials, tr)
		}
	}
	return res
}

// TestKVTablesGolden: the kv report's tables (the seed beside this run,
// the clients, replication) from a synthetic run; -update rewrites them.
func TestKVTablesGolden(t *testing.T) {
	for _, trials := range []int{3, 6} { // a range of trials; a 95% CI
		t.Run(fmt.Sprint(trials), func(t *testing.T) {
			res := kvSynthetic(t, trials)
			got := []byte(kvTables(kvStats(res)) + "\n" + kvReplNotes(res))
			path := filepath.Join("testdata", fmt.Sprintf("kv-tables-%d.md.golden", trials))
			if *updateGolden {
				if err := os.WriteFile(path, got, 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(path)
			if err != nil {
				t.Fatalf("%v (go test ./study -run TestKVTablesGolden -update)", err)
			}
			if !bytes.Equal(got, want) {
				t.Errorf("kv tables differ from %s (-update to accept):\n%s", path, got)
			}
		})
	}
}

// spreadRE is a median with its spread, as report.FormatSpread prints it.
var spreadRE = regexp.MustCompile(`(± [0-9.]+%|\[[^\]]+\])`)

// TestKVTablesCarrySpread: every figure of this run in the kv tables is a
// median with its spread (a CI or the trials' range), and every ratio has
// its range; only the seed's quoted figures, the error counts and "–"
// stand alone. Fails if a table goes back to bare medians.
func TestKVTablesCarrySpread(t *testing.T) {
	// Per table (by its header's start): label columns, and whether the
	// last column is a count (errors), exact and summed, not a median.
	tables := []struct {
		head   string
		labels int
		count  bool
	}{
		{"| Configuration | Client |", 2, false},
		{"| Operation | Configuration | avg |", 2, true},
		{"| Operation | Persistence | wirebench RESP / Redis |", 2, false},
		{"| Operation | Persistence | wirebench client req/s |", 2, false},
		{"| Followers |", 1, false},
	}
	for _, trials := range []int{3, 6} {
		res := kvSynthetic(t, trials)
		checked, tablesSeen := 0, 0
		labels, count := -1, false
		for _, line := range strings.Split(kvTables(kvStats(res))+"\n"+kvReplNotes(res), "\n") {
			if !strings.HasPrefix(line, "|") {
				labels = -1
				continue
			}
			if labels < 0 {
				for _, tb := range tables {
					if strings.HasPrefix(line, tb.head) {
						labels, count = tb.labels, tb.count
						tablesSeen++
					}
				}
				if labels < 0 {
					t.Fatalf("a table this test does not know: %s", line)
				}
				continue
			}
			if strings.HasPrefix(line, "|---") || strings.Contains(line, "seed:") { // the seed's quoted figures
				continue
			}
			cols := strings.Split(strings.Trim(line, "| "), " | ")
			for i, c := range cols {
				if i < labels || c == "–" || count && i == len(cols)-1 {
					continue
				}
				if !spreadRE.MatchString(c) {
					t.Errorf("%d trials: %q has no spread, in\n%s", trials, c, line)
				}
				checked++
			}
		}
		if tablesSeen != len(tables) || checked < 50 {
			t.Fatalf("%d trials: %d of %d tables seen, %d figures checked", trials, tablesSeen, len(tables), checked)
		}
	}
}

// TestKVVersusRedis: a row per group that has both servers, with both
// rates and p99s, their ratios and whether ours is at or above Redis.
func TestKVVersusRedis(t *testing.T) {
	ms := func(xs ...float64) []float64 {
		for i := range xs {
			xs[i] *= 1e6
		}
		return xs
	}
	st := []kvCellStats{
		{op: "SET", persistence: "AOF everysec, zipf:0.99", label: "Redis", trials: 2, rps: []float64{100, 100}, p99: ms(2, 2), srvCPU: []float64{10e3, 10e3}},
		{op: "SET", persistence: "AOF everysec, zipf:0.99", label: "wirebench RESP", trials: 2, rps: []float64{110, 110}, p99: ms(1.5, 1.5), srvCPU: []float64{9e3, 9e3}},
		{op: "GET", persistence: "AOF always, zipf:0.99, -P 16", label: "Redis", trials: 2, rps: []float64{100, 100}, p99: ms(2, 2)},
		{op: "GET", persistence: "AOF always, zipf:0.99, -P 16", label: "wirebench RESP", trials: 2, rps: []float64{90, 90}, p99: ms(3, 3)},
		{op: "GET", persistence: "AOF everysec", label: "wirebench RESP", trials: 2, rps: []float64{90, 90}, p99: ms(3, 3)}, // no Redis
	}
	got := kvVersusRedis(st)
	for _, want := range []string{
		"| SET | AOF everysec, zipf:0.99 | 100.0 [all equal] | 110.0 [all equal] | 1.10× [1.10…1.10] | 2.000ms [all equal] | 1.500ms [all equal] | 0.75× [0.75…0.75] | 0.90× [0.90…0.90] | yes | cannot tell with 2+2 trials |",
		"| GET | AOF always, zipf:0.99, -P 16 | 100.0 [all equal] | 90.00 [all equal] | 0.90× [0.90…0.90] | 2.000ms [all equal] | 3.000ms [all equal] | 1.50× [1.50…1.50] | – | no: rate, p99 |",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("table lacks %q:\n%s", want, got)
		}
	}
	if strings.Contains(got, "| GET | AOF everysec |") {
		t.Errorf("a row without Redis:\n%s", got)
	}
	if kvVersusRedis(st[4:]) != "" {
		t.Errorf("a table without both servers")
	}
	// study --cells may leave the replication cells out: no empty table then.
	if n := kvReplNotes(&results.Study{Cells: []results.Cell{{Group: "SET, AOF everysec", Label: "Redis"}}}); n != "" {
		t.Errorf("a replication table without replication cells:\n%s", n)
	}
}
