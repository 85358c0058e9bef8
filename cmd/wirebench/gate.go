package main

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/wirebench/wirebench/gate"
	"github.com/wirebench/wirebench/results"
)

func init() {
	register("gate", command{
		summary: "CI verdict on a base-vs-change study: exit 0 no regression, 1 regression, 3 undecidable",
		run:     runGate,
	})
}

// gateExit carries the verdict's exit code (1 regression, 3 undecidable)
// out of runGate, with the one-line summary for stderr.
type gateExit struct {
	code int
	msg  string
}

func (e gateExit) Error() string { return e.msg }
func (e gateExit) ExitCode() int { return e.code }

// runGate judges the change cell of a study against its base: the
// verdict goes to stdout in the chosen format, its one-line summary to
// stderr when it is not a pass, and the exit code says it to CI.
func runGate(ctx context.Context, env *cliEnv, args []string) error {
	fs := newFlagSet(env, "gate", "RESULTS [--max-regression METRIC:±N%]... [--alpha 0.05] [--base CELL] [--change CELL] [--format text|github|json]\n\n"+
		"Judges the change against the base in a study's results (wirebench study run gate.yaml --out DIR).\n"+
		"RESULTS is a results.json, a run's folder, or the study's --out folder: its newest run is judged.\n"+
		"Metrics: "+gate.MetricNames()+".\n"+
		"Exit status: 0 no regression beyond tolerance (shown at α), 1 a regression beyond tolerance,\n"+
		"significant at α after Holm's correction, 2 bad usage or unreadable results, 3 undecidable\n"+
		"(too few trials, or too much noise to rule out a regression of the tolerated size).")
	tols := fs.StringArray("max-regression", nil, "tolerance `METRIC:±N%` (repeatable), (default: "+strings.Join(gate.DefaultToleranceText, ", ")+")")
	alpha := fs.Float64("alpha", 0.05, "significance `level` of the verdict")
	base := fs.String("base", "", "the base `cell` (default: the study's baseline)")
	change := fs.String("change", "", "the change `cell` (default: the study's other cell)")
	aa := fs.String("aa", "", "a `cell` running the base's build again, for the A/A noise check (default: found by command and commit)")
	format := fs.String("format", "text", "output `format`: "+strings.Join(gate.Formats, ", "))
	links := fs.StringArray("link", nil, "`URL` of the full report, listed in the output (repeatable)")
	pos, err := parseInterspersed(fs, args)
	if err != nil {
		return err
	}
	if len(pos) != 1 {
		return usagef("want one results.json or study output folder (from wirebench study run), got %d arguments", len(pos))
	}
	o := gate.Options{Base: *base, Change: *change, AA: *aa, Alpha: *alpha}
	if o.Tolerances, err = gate.ParseTolerances(*tols); err != nil {
		return usageError{Err: errors.New(strings.TrimPrefix(err.Error(), gate.ErrOptions.Error()+": "))}
	}
	if *format != "text" && *format != "github" && *format != "json" {
		return usagef("unknown format %q (want %s)", *format, strings.Join(gate.Formats, ", "))
	}
	file, runs, err := results.ResultsFile(pos[0])
	if err != nil {
		return gateExit{code: 2, msg: err.Error()}
	}
	switch { // a study's --out folder: say which of its runs is judged
	case runs == 1:
		fmt.Fprintf(env.stderr, "wirebench gate: judging %s (the only run in %s)\n", file, pos[0])
	case runs > 1:
		fmt.Fprintf(env.stderr, "wirebench gate: judging %s (the newest of %d runs in %s)\n", file, runs, pos[0])
	}
	res, err := results.ReadFile(file)
	if err != nil {
		return gateExit{code: 2, msg: err.Error()} // not a verdict: never 1 or 3
	}
	r, err := gate.Evaluate(res, o)
	if err != nil {
		return usageError{Err: errors.New(strings.TrimPrefix(err.Error(), gate.ErrOptions.Error()+": "))}
	}
	if err := gate.Write(env.stdout, r, *format, *links...); err != nil {
		return err
	}
	if r.ExitCode != 0 {
		return gateExit{code: r.ExitCode, msg: r.Summary}
	}
	return nil
}
