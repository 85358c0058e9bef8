package main

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/spf13/pflag"

	"github.com/wirebench/wirebench/load/flags"
	"github.com/wirebench/wirebench/report"
	"github.com/wirebench/wirebench/results"
)

func init() {
	register("merge", command{
		summary: "merge the segments of one load test exactly and check its thresholds; JSON to stdout or --out",
		run:     runMerge,
	})
}

const mergeUsage = `[--out all.json [--force]] [--threshold EXPR]... [--unchecked] INPUT...

INPUT is a result file (load --out; JSON Lines of several results too),
a directory (its *.json and *.jsonl files), or - for standard input
(load --out - of every segment, one JSON line each).
The inputs must be exactly the segments of one test: same scenario,
configuration and options, every segment i/n once (--unchecked merges any
results of one scenario). Inputs run with --link must all be across the
same link (none on loopback): the merge keeps each one's calibration and
sums their relays' figures. The thresholds the segments were run with, and
any --threshold, are evaluated on the merged result.
Exit status: 0 ok, 1 unreadable or not one test, 2 bad usage, 99 a
threshold failed (the merged result is written all the same).`

// mergeFlags are merge's options.
type mergeFlags struct {
	summary, force, unchecked bool
	out                       string
	wait                      time.Duration
	thresholds                []string
}

func newMergeFlags(env *cliEnv, f *mergeFlags) *pflag.FlagSet {
	fs := newFlagSet(env, "merge", mergeUsage)
	fs.BoolVar(&f.summary, "summary", false, "also print the merged summary (on stderr when the result goes to stdout)")
	fs.StringVar(&f.out, "out", "", "write the merged result to this `file` (whole or not at all) instead of stdout")
	fs.BoolVar(&f.force, "force", false, "replace an existing --out file")
	fs.BoolVar(&f.unchecked, "unchecked", false, "merge any results of one scenario (repeated runs, some segments only): no one-test checks")
	fs.Var(flags.Duration{D: &f.wait}, "wait", "wait up to this `long` for missing segments to appear in the inputs (a merge Job started beside the segments)")
	fs.StringArrayVar(&f.thresholds, "threshold", nil, "pass/fail `criterion` on the merged result (repeatable), as load's")
	return fs
}

func runMerge(ctx context.Context, env *cliEnv, args []string) error {
	var f mergeFlags
	fs := newMergeFlags(env, &f)
	pos, err := parseInterspersed(fs, args)
	if err != nil {
		return err
	}
	if len(pos) == 0 {
		return usagef("want result files, directories or - to merge")
	}
	if err := flags.CheckDuration("--wait", f.wait, 0, maxMergeWait); err != nil {
		return err
	}
	if err := checkNewOut(f.out, f.force); err != nil {
		return err
	}
	if f.wait > 0 && (f.unchecked || slices.Contains(pos, "-")) {
		return usagef("--wait reads files and directories again until the segments are complete: not with - or --unchecked")
	}
	if i := slices.Index(pos, "-"); i >= 0 && slices.Contains(pos[i+1:], "-") {
		return usagef("- (stdin) given twice")
	}
	m, ths, notes, err := results.MergeInputs(ctx, env.stdin, pos, results.MergeOptions{Unchecked: f.unchecked, Wait: f.wait, Thresholds: f.thresholds})
	switch {
	case errors.Is(err, results.ErrThreshold):
		return usagef("--threshold: %s", flags.Message(err))
	case err != nil:
		return errors.New(flags.Message(err)) // no "load: " inside "wirebench merge: "
	}
	for _, n := range notes {
		fmt.Fprintf(env.stderr, "wirebench merge: warning: %s\n", n)
	}
	// The summary and threshold lines go where the JSON does not.
	w := env.stderr
	if f.out != "" {
		w = env.stdout
	}
	if f.summary || f.out != "" {
		if err := report.WriteLoad(w, m, report.LoadText{}); err != nil {
			return err
		}
	}
	_, thErr := judge(w, m, ths)
	if f.out == "" {
		err = m.WriteJSON(env.stdout)
	} else {
		err = results.WriteFile(f.out, f.force, m.WriteJSON)
	}
	if err != nil {
		return err
	}
	return thErr
}
