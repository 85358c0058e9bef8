package main

import (
	"context"
	"fmt"
	"time"

	"github.com/wirebench/wirebench/report"
	"github.com/wirebench/wirebench/results"
)

func init() {
	register("compare", command{
		summary: "A/B-compare two studies benchstat-style, or two load --out runs side by side",
		run:     runCompare,
	})
}

// runCompare prints, for every cell in both study files, old and new
// medians with their CIs and the change with its p-value; for two load
// runs, every metric side by side with its change and no significance
// claimed. A change is not a failure: the exit code is 0 whenever the
// files could be read.
func runCompare(ctx context.Context, env *cliEnv, args []string) error {
	fs := newFlagSet(env, "compare", "old.json new.json   (two studies' results.json, or two load --out files)")
	pos, err := parseInterspersed(fs, args)
	if err != nil {
		return err
	}
	if len(pos) != 2 {
		return usagef("want two result files (old new), got %d", len(pos))
	}
	old, err := readResults(env.stderr, pos[0])
	if err != nil {
		return err
	}
	new, err := readResults(env.stderr, pos[1])
	if err != nil {
		return err
	}
	for i, r := range []*results.Study{old, new} {
		warnInterrupted(env, "compare", pos[i], r)
	}
	return report.WriteAB(env.stdout, old, new)
}

// warnInterrupted warns on stderr about each cut-short run in a result
// file, whose figures cover less than planned.
func warnInterrupted(env *cliEnv, cmd, name string, r *results.Study) {
	if s := r.Stop; s != nil && s.Interrupted { // a study: once, not per cut trial
		fmt.Fprintf(env.stderr, "wirebench %s: warning: %s was interrupted (%s) after %d of %d trials: a partial study\n",
			cmd, name, s.Signal, s.TrialsRun, s.TrialsPlanned)
		return
	}
	for _, t := range r.Trials {
		if t.Load != nil && t.Load.Stop != nil && t.Load.Stop.Interrupted {
			fmt.Fprintf(env.stderr, "wirebench %s: warning: %s was interrupted (%s) after %v: a partial run\n",
				cmd, name, t.Load.Stop.Signal, t.Load.Measured().Round(time.Millisecond))
		}
	}
}
