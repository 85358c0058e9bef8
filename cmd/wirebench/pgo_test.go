package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/wirebench/wirebench/internal/pgoprof"
)

// pgoMinShare is the share of default.pgo's samples a function of ours
// must be on the stack of to be checked: 0.05%, a few of the 100-Hz
// samples of bench/pgo.sh's run (fastapi.acceptHeaders, whose rename once
// cost ~160 instructions a GET, is on 0.07%). Below it the scheduler's
// luck decides which functions appear at all, and what PGO made of their
// calls is too little to measure.
const pgoMinShare = 0.0005

// TestPGOProfileFresh: every function of ours with at least pgoMinShare of
// default.pgo's samples is still declared. The compiler applies the
// profile by function name, so a function renamed or removed since the
// profile was taken silently loses its hot calls' inlining and
// devirtualization; failing, this names them: rerun bench/pgo.sh.
func TestPGOProfileFresh(t *testing.T) {
	data, err := os.ReadFile("default.pgo")
	if err != nil {
		t.Fatal(err)
	}
	p, err := pgoprof.Parse(data)
	if err != nil {
		t.Fatalf("default.pgo: %v", err)
	}
	m := pgoprof.Module{Root: filepath.Join("..", ".."), Path: "github.com/wirebench/wirebench", Main: "cmd/wirebench"}
	stale, checked, err := pgoprof.Stale(p, m, pgoMinShare)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%d functions of ours on %.2g%% of default.pgo's samples or more, %d stale", checked, pgoMinShare*100, len(stale))
	// Something must be checked: a profile without our functions (a bad
	// regeneration) would pass vacuously.
	if checked < 50 {
		t.Errorf("default.pgo has %d functions of ours on %.2g%% of its samples or more; want 50 or more (is it bench/pgo.sh's profile of the server and the clients?)", checked, pgoMinShare*100)
	}
	if len(stale) > 0 {
		t.Errorf("default.pgo names %d functions of ours that are no longer declared (renamed or removed since it was made: PGO no longer applies to them); rerun `flock /tmp/wirebench-load.lock bench/pgo.sh` and commit cmd/wirebench/default.pgo:\n  %s",
			len(stale), strings.Join(stale, "\n  "))
	}
}
