package flags

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/pflag"

	"github.com/wirebench/wirebench/results"
)

// Output are the flags that say what becomes of a run's result, shared
// by load and replay: --out, --hdr-out, --force, --threshold, --latency,
// --percentiles and --quiet.
type Output struct {
	Out, HdrOut    string
	Thresholds     []string
	Latency, Quiet bool
	percentiles    string
	force          *bool
}

// RegisterOutput adds the output flags; outUsage is --out's help (the schema
// written), force the run's --force (a --record log's too).
func (o *Output) RegisterOutput(fs *pflag.FlagSet, force *bool, outUsage string) {
	o.force = force
	fs.BoolVar(&o.Latency, "latency", false, "print the latency distribution (wrk's --latency: 50, 75, 90, 99%)")
	fs.StringVar(&o.percentiles, "percentiles", "", "print the latency at these `percentiles`, e.g. 50,90,99,99.9")
	fs.StringVar(&o.Out, "out", "", outUsage)
	fs.StringVar(&o.HdrOut, "hdr-out", "", "write the latency histogram to this `file` in the HdrHistogram log format (ns)")
	fs.BoolVar(force, "force", false, "replace existing --out and --hdr-out files")
	fs.StringArrayVar(&o.Thresholds, "threshold", nil, "pass/fail `criterion` (repeatable): p99<50ms, avg<10ms, errors<1%, rps>1000")
	fs.BoolVarP(&o.Quiet, "quiet", "q", false, "no live status line")
}

// Read reads --threshold and the distribution asked for (--latency,
// --percentiles).
func (o *Output) Read() (ths []results.Threshold, pcts []float64, err error) {
	ths = make([]results.Threshold, len(o.Thresholds))
	for i, s := range o.Thresholds {
		if ths[i], err = results.ParseThreshold(s); err != nil {
			return nil, nil, Usagef("--threshold: %s", Message(err))
		}
	}
	if o.Latency {
		pcts = results.WrkPercentiles
	}
	if o.percentiles != "" {
		if pcts, err = results.ParsePercentiles(o.percentiles); err != nil {
			return nil, nil, Usagef("--percentiles: %s", Message(err))
		}
	}
	return ths, pcts, nil
}

// Prepare resolves --out for the run's segment and refuses, before the
// run, output files that exist (without --force). A directory (an
// existing one, or a path ending in /, then created) gets
// segment-<i>-of-<n>.json inside, so that the n pods of an Indexed Job
// can share one command line.
func (o *Output) Prepare(seg results.Segment) error {
	if fi, err := os.Stat(o.Out); o.Out != "" && o.Out != "-" && (err == nil && fi.IsDir() || strings.HasSuffix(o.Out, "/")) {
		if err := os.MkdirAll(o.Out, 0o777); err != nil {
			return fmt.Errorf("--out: %w", err)
		}
		if seg.N < 1 {
			seg = results.Segment{I: 1, N: 1}
		}
		o.Out = filepath.Join(o.Out, "segment-"+strings.ReplaceAll(seg.String(), "/", "-of-")+".json")
	}
	for _, path := range []string{o.Out, o.HdrOut} {
		if path != "" && path != "-" {
			if err := results.CheckNew(path, *o.force); err != nil {
				return err
			}
		}
	}
	return nil
}

// Write writes the run's --out result (- for stdout, as a JSON line) and
// --hdr-out log, each whole or not at all (a temporary file renamed into
// place), so an interrupted run leaves the previous file intact. A
// result written names the git commit it was measured at
// (measure.Env.AddGit): a run that only prints never asks git.
func (o *Output) Write(stdout io.Writer, res *results.Load) error {
	if o.Out != "" {
		res.Env.AddGit(context.Background())
	}
	if o.Out == "-" {
		if err := res.WriteJSONLine(stdout); err != nil {
			return err
		}
	} else if o.Out != "" {
		if err := results.WriteFile(o.Out, *o.force, res.WriteJSON); err != nil {
			return err
		}
	}
	if o.HdrOut != "" {
		return results.WriteFile(o.HdrOut, *o.force, func(w io.Writer) error { return results.WriteHdrLog(w, res) })
	}
	return nil
}
