package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/spf13/pflag"

	"github.com/wirebench/wirebench/load/flags"
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
results of one scenario). The thresholds the segments were run with, and
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
	parts, err := readChecked(ctx, env.stdin, pos, !f.unchecked, f.wait)
	if err != nil {
		return err
	}
	rs := make([]*results.Load, len(parts))
	var stop *results.Stop
	for i, p := range parts {
		rs[i] = p.Result
		if p.Result.Stop != nil && p.Result.Stop.Interrupted {
			fmt.Fprintf(env.stderr, "wirebench merge: warning: %s was interrupted (%s): it covers less than its segment's share\n", p.Name, p.Result.Stop.Signal)
			stop = p.Result.Stop
		}
	}
	m, err := results.Merge(rs...)
	if err != nil {
		return err
	}
	if stop != nil { // the merge of a cut-short run is cut short too
		m.Stop = &results.Stop{Interrupted: true, Signal: stop.Signal}
		m.Warnings = append(m.Warnings, "merged from interrupted results: the figures cover less than the test planned")
	}
	ths, err := mergeThresholds(m, f.thresholds)
	if err != nil {
		return err
	}
	// The summary and threshold lines go where the JSON does not.
	w := env.stderr
	if f.out != "" {
		w = env.stdout
	}
	if f.summary || f.out != "" {
		if err := results.WriteSummary(w, m); err != nil {
			return err
		}
		if err := results.WriteStreamSummary(w, m); err != nil {
			return err
		}
		if err := results.WriteKVSummary(w, m); err != nil {
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

// mergePoll is how often merge --wait reads its inputs again.
const mergePoll = time.Second

// readChecked reads the inputs and checks that they are one test's
// segments (if check). With wait > 0, inputs not there yet and missing
// segments are waited for, up to wait; any other error ends it at once.
func readChecked(ctx context.Context, stdin io.Reader, inputs []string, check bool, wait time.Duration) ([]results.Part, error) {
	deadline := time.Now().Add(wait)
	for {
		parts, err := readParts(stdin, inputs)
		if err == nil && check {
			err = results.CheckSegments(parts)
		}
		pending := errors.Is(err, results.ErrIncomplete) || errors.Is(err, os.ErrNotExist) || errors.Is(err, results.ErrNoResultFiles)
		if err == nil || !pending || wait <= 0 || time.Now().After(deadline) {
			if errors.Is(err, results.ErrNotOneTest) {
				err = errors.New(cliMessage(err)) // no "load: " inside "wirebench merge: "
			}
			if err != nil && pending && wait > 0 {
				err = fmt.Errorf("after waiting %v: %w", wait, err)
			}
			if err != nil {
				return nil, err
			}
			return parts, nil
		}
		select {
		case <-ctx.Done():
			return nil, fmt.Errorf("%w (waiting for segments: %w)", err, ctx.Err())
		case <-time.After(mergePoll):
		}
	}
}

// mergeThresholds are the thresholds the segments were run with (load
// records them in Config) and those given to merge, each once.
func mergeThresholds(m *results.Load, extra []string) ([]results.Threshold, error) {
	var exprs []string
	exprs = append(exprs, m.Config.Thresholds...)
	var ths []results.Threshold
	seen := map[string]bool{}
	for _, e := range append(exprs, extra...) {
		if seen[strings.TrimSpace(e)] {
			continue
		}
		seen[strings.TrimSpace(e)] = true
		th, err := results.ParseThreshold(e)
		if err != nil {
			return nil, usagef("--threshold: %s", cliMessage(err))
		}
		ths = append(ths, th)
	}
	return ths, nil
}

// readParts reads every input (results.ReadParts); - twice is a usage error.
func readParts(stdin io.Reader, inputs []string) ([]results.Part, error) {
	if i := slices.Index(inputs, "-"); i >= 0 && slices.Contains(inputs[i+1:], "-") {
		return nil, usagef("- (stdin) given twice")
	}
	return results.ReadParts(stdin, inputs)
}
