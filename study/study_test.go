package study

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/wirebench/wirebench/internal/testkit"
	"github.com/wirebench/wirebench/load"
	"github.com/wirebench/wirebench/load/scenario"
	"github.com/wirebench/wirebench/results"
)

// TestTinyStudyEndToEnd runs a two-cell study with three trials each:
// every trial gets a fresh server process (distinct PIDs), the dataset has
// the same size before and after, trials are interleaved, and the server
// was sampled.
func TestTinyStudyEndToEnd(t *testing.T) {
	testkit.NeedPeers(t) // slow: CI's peer step (docs/testing.md)
	bin := testkit.Binary(t)
	lo := load.Options{Options: results.Options{Concurrency: 2}}
	ds := dataset{users: 20, todos: 5}
	def := Definition{
		Name: "tiny", Title: "tiny",
		Cells: []Cell{
			apiCell("crud", "json", ds, nil, lo, scenario.Options{Name: scenario.CRUD, Format: "json"}),
			apiCell("crud", "msgpack", ds, []string{"--json-lib", "fast"}, lo, scenario.Options{Name: scenario.CRUD, Format: "msgpack"}),
		},
	}
	var lines []string
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	res, err := Run(ctx, def, Options{Trials: 3, Ports: testPorts(), Warmup: 100 * time.Millisecond, Duration: 300 * time.Millisecond,
		Seed: 7, Binary: bin, ServeArgs: []string{"--max-body", "1048576"}, Progress: func(s string) { t.Log(time.Now().Format("15:04:05.000"), s); lines = append(lines, s) }})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Trials) != 6 || len(lines) != 6 {
		t.Fatalf("%d trials, %d progress lines; want 6", len(res.Trials), len(lines))
	}
	pids := map[int]bool{}
	for i, tr := range res.Trials {
		if tr.Error != "" {
			t.Fatalf("trial %d (%s): %s", i, tr.Cell, tr.Error)
		}
		if tr.ServerPID == 0 || pids[tr.ServerPID] {
			t.Fatalf("trial %d: server PID %d not fresh", i, tr.ServerPID)
		}
		pids[tr.ServerPID] = true
		if tr.UsersBefore != 20 || tr.UsersAfter != 20 || tr.TodosBefore != 5 || tr.TodosAfter != 5 {
			t.Fatalf("trial %d: dataset %d→%d users, %d→%d todos", i, tr.UsersBefore, tr.UsersAfter, tr.TodosBefore, tr.TodosAfter)
		}
		if tr.Load.Requests == 0 || tr.Load.Failed != 0 {
			t.Fatalf("trial %d: %d requests, %d failed: %v", i, tr.Load.Requests, tr.Load.Failed, tr.Load.Failures)
		}
		if len(tr.Server.Samples) < 2 || tr.Server.PeakRSS == 0 || tr.Server.GoMem["go_memstats_heap_inuse_bytes"] == 0 {
			t.Fatalf("trial %d: server not sampled: %d samples, peak %d, gomem %v", i, len(tr.Server.Samples), tr.Server.PeakRSS, tr.Server.GoMem)
		}
		// Interleaving: round r holds every cell's r-th trial.
		if tr.Index != i/2 || tr.Order != i {
			t.Fatalf("trial %d has index %d order %d: not interleaved", i, tr.Index, tr.Order)
		}
	}
	if len(res.Cells) != 2 || res.Seed != 7 || res.Env.GoVersion == "" {
		t.Fatalf("results header incomplete: %+v", res.Cells)
	}
	// The reference server is a cell like any other: its command, with
	// --serve-args appended.
	want := "{wirebench} serve --http 127.0.0.1:{port} --grpc 127.0.0.1:{port2} --grpc-transport grpc-go --seed-users 20 --seed-todos 5 --json-lib fast --max-body 1048576"
	if got := strings.Join(res.Cells[1].Command, " "); got != want || !res.Cells[0].Baseline || res.Cells[1].Baseline {
		t.Fatalf("cell 1 command %q (want %q), baselines %v %v", got, want, res.Cells[0].Baseline, res.Cells[1].Baseline)
	}
}

func TestTrialOrderShuffledPerRoundAndReproducible(t *testing.T) {
	a, b := trialOrder(4, 5, 42), trialOrder(4, 5, 42)
	shuffled := false
	for i := range a {
		if a[i] != b[i] {
			t.Fatal("same seed, different order")
		}
		if a[i].index != i/4 {
			t.Fatalf("position %d holds round %d", i, a[i].index)
		}
		if a[i].cell != i%4 {
			shuffled = true
		}
	}
	if !shuffled {
		t.Error("order never differs from A B C D")
	}
	for r := range 5 {
		seen := map[int]bool{}
		for _, x := range a[r*4 : r*4+4] {
			seen[x.cell] = true
		}
		if len(seen) != 4 {
			t.Fatalf("round %d lacks a cell: %v", r, a[r*4:r*4+4])
		}
	}
}

func TestBuiltinStudiesAreWellFormed(t *testing.T) {
	for _, name := range []string{"formats", "json-libs", "payload-size", "grpc-vs-rest"} {
		def, err := Lookup(name)
		if err != nil {
			t.Fatal(err)
		}
		if len(def.Cells) == 0 && def.Measure == nil {
			t.Errorf("%s: nothing to run", name)
		}
		ids := map[string]bool{}
		for _, c := range def.Cells {
			if ids[c.ID()] {
				t.Errorf("%s: duplicate cell %s", name, c.ID())
			}
			ids[c.ID()] = true
			m, err := newClient(c.Load, vars{ports: []int{1, 2}})
			if err != nil {
				t.Errorf("%s/%s: %v", name, c.ID(), err)
				continue
			}
			m.Close()
		}
	}
	if _, err := Lookup("nope"); err == nil {
		t.Error("unknown study found")
	}
}
