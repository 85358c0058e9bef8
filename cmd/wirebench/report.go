package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"sort"
	"strings"

	"github.com/spf13/pflag"

	"github.com/wirebench/wirebench/load/flags"
	"github.com/wirebench/wirebench/report"
	"github.com/wirebench/wirebench/results"
)

func init() {
	register("report", command{
		summary: "render a study's results.json or a load --out file as Markdown, HTML or CSV, or export it to a tracker (Bencher, github-action-benchmark)",
		run:     runReport,
	})
}

// reportFormats maps --format to a renderer.
var reportFormats = map[string]func(io.Writer, *report.Report) error{
	"md":                 report.WriteMarkdown,
	"csv":                report.WriteCSV,
	"html":               report.WriteHTML,
	report.FormatBMF:     report.WriteBMF,
	report.FormatSmaller: report.WriteSmallerIsBetter,
	report.FormatBigger:  report.WriteBiggerIsBetter,
}

func runReport(ctx context.Context, env *cliEnv, args []string) error {
	fs := newFlagSet(env, "report", "[--format md|html|csv|bmf|customSmallerIsBetter|customBiggerIsBetter] [-o file [--force]] results.json|load.json|DIR\n\n"+
		"bmf is Bencher Metric Format (bencher run --adapter json); customSmallerIsBetter and customBiggerIsBetter are\n"+
		"github-action-benchmark's tools of those names (one direction per file). Each cell is a benchmark \"<study>/<cell>\"\n"+
		"(\"load/raw\" for a load run), each metric a measure by its short name (p99, rps, cpu_per_req); docs/results.md.")
	format := fs.String("format", "md", "output format: "+strings.Join(formatNames(), ", "))
	out := fs.StringP("output", "o", "", "write to this `file` instead of stdout (never replaced without --force)")
	force := fs.Bool("force", false, "replace an existing -o file")
	flags.Aliases(fs, map[string]string{"o": "output"})
	pos, err := parseInterspersed(fs, args)
	if err != nil {
		return err
	}
	if len(pos) != 1 {
		return usagef("want one result file (a study's results.json or a load --out file), got %d arguments", len(pos))
	}
	render, ok := reportFormats[*format]
	if !ok {
		return usagef("unknown format %q (want %s)", *format, strings.Join(formatNames(), ", "))
	}
	if err := checkNewOut(*out, *force); err != nil {
		return err
	}
	r, err := readResults(env.stderr, pos[0])
	if err != nil {
		return err
	}
	var buf bytes.Buffer
	if err := render(&buf, report.Build(r)); err != nil {
		return err
	}
	if *out == "" {
		_, err = env.stdout.Write(buf.Bytes())
		return err
	}
	return results.WriteFile(*out, *force, func(w io.Writer) error { _, err := w.Write(buf.Bytes()); return err })
}

func formatNames() []string {
	var names []string
	for n := range reportFormats {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// readResults reads a study result file or a load result file, naming
// it in errors: one over results.MaxFileSize is refused from its size,
// and one whose numbers cannot be true (results.Validate) is refused too.
// A run's folder stands for its results.json, and a study's --out folder
// for its newest run's, named on stderr.
func readResults(stderr io.Writer, path string) (*results.Study, error) {
	file, runs, err := results.ResultsFile(path)
	if err != nil {
		return nil, err
	}
	if runs > 0 {
		fmt.Fprintf(stderr, "wirebench: reading %s (the newest of %d runs in %s)\n", file, runs, path)
	}
	path = file
	if err := results.CheckFileSize(path); err != nil {
		return nil, err
	}
	r, err := results.ReadFile(path)
	if err != nil {
		return nil, err
	}
	if err := results.Validate(r); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return r, nil
}

// parseInterspersed parses flags before, between and after positional
// arguments ("report results.json --format md"), as pflag does.
func parseInterspersed(fs *pflag.FlagSet, args []string) ([]string, error) {
	if err := parseFlags(fs, args); err != nil {
		return nil, err
	}
	return fs.Args(), nil
}
