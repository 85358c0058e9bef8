package main

import (
	"bytes"
	"context"
	"errors"
	"io"
	"strings"

	"github.com/wirebench/wirebench/report"
	"github.com/wirebench/wirebench/results"
)

func init() {
	register("export", command{
		summary: "write results for a benchmark tracker: Bencher (bmf) or github-action-benchmark, several results in one file",
		run:     runExport,
	})
}

func runExport(ctx context.Context, env *cliEnv, args []string) error {
	fs := newFlagSet(env, "export", "--format bmf|github-action-benchmark|customSmallerIsBetter|customBiggerIsBetter [-o file [--force]] RESULT...\n\n"+
		"Each RESULT is a study's results.json (or its folder) or a load or capacity --out file. bmf is Bencher Metric\n"+
		"Format (bencher run --adapter json --file FILE); github-action-benchmark is that action's customSmallerIsBetter\n"+
		"(latencies and costs), customBiggerIsBetter its other direction (rates, capacity). Benchmarks are \"<study>/<cell>\",\n"+
		"a single run's \"<study>/<file name>\"; measures by their short names (p99, rps); docs/results.md.")
	format := fs.String("format", report.FormatBMF, "tracker format: "+strings.Join(report.TrackFormats, ", "))
	out := fs.StringP("output", "o", "", "write to this `file` instead of stdout (never replaced without --force)")
	force := fs.Bool("force", false, "replace an existing -o file")
	pos, err := parseInterspersed(fs, args)
	if err != nil {
		return err
	}
	if len(pos) == 0 {
		return usagef("want one or more result files")
	}
	if err := checkNewOut(*out, *force); err != nil {
		return err
	}
	var reps []*report.Report
	for _, p := range pos {
		r, err := readResults(env.stderr, p)
		if err != nil {
			return err
		}
		reps = append(reps, report.Build(r))
	}
	var buf bytes.Buffer
	if err := report.WriteTrack(&buf, *format, reps...); err != nil {
		if errors.Is(err, report.ErrTrack) {
			return usagef("%s", strings.TrimPrefix(err.Error(), report.ErrTrack.Error()+": "))
		}
		return err
	}
	if *out == "" {
		_, err = env.stdout.Write(buf.Bytes())
		return err
	}
	return results.WriteFile(*out, *force, func(w io.Writer) error { _, err := w.Write(buf.Bytes()); return err })
}
