package main

import (
	"context"

	"github.com/wirebench/wirebench/report"
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
	old, err := readResults(pos[0])
	if err != nil {
		return err
	}
	new, err := readResults(pos[1])
	if err != nil {
		return err
	}
	return report.WriteAB(env.stdout, old, new)
}
