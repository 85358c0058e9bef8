package main

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/spf13/pflag"

	"github.com/wirebench/wirebench/capacity"
	"github.com/wirebench/wirebench/load"
	"github.com/wirebench/wirebench/load/flags"
	"github.com/wirebench/wirebench/load/replay"
	"github.com/wirebench/wirebench/report"
	"github.com/wirebench/wirebench/results"
)

// searchConcurrency caps a replay search's requests in flight unless -c
// says otherwise: each step sizes its workers to its rate and SLO up to it.
const searchConcurrency = 256

// replaySearch are replay's flags for "how much faster within the SLO":
// capacity's search, in speed (replay.Search).
type replaySearch struct {
	slo       []string
	precision string
	s         replay.SpeedSearch
	noConfirm bool
}

func (s *replaySearch) register(fs *pflag.FlagSet) {
	fs.StringArrayVar(&s.slo, "slo", nil, "search the highest --speed that meets this `criterion` (repeatable): p99<20ms, errors<0.1% (docs/replay.md)")
	fs.Float64Var(&s.s.MinSpeed, "min-speed", replay.DefaultMinSpeed, "--slo: lowest `speed` to try")
	fs.Float64Var(&s.s.MaxSpeed, "max-speed", replay.DefaultMaxSpeed, "--slo: highest `speed` to try")
	fs.StringVar(&s.precision, "precision", "5%", "--slo: stop when the first failing speed is within this `fraction` of the last passing one")
	o := &s.s.Capacity
	o.StepDuration, o.Warmup, o.MaxTime = capacity.DefaultStepDuration, capacity.DefaultWarmup, capacity.DefaultMaxTime
	fs.Var(flags.Duration{D: &o.StepDuration}, "step-duration", "--slo: each step's `length`, rounded to whole passes of the recording (at least one)")
	fs.Var(flags.Duration{D: &o.Warmup}, "warmup", "--slo: replay this `long` at each step's speed before its window")
	fs.BoolVar(&s.noConfirm, "no-confirm", false, "--slo: skip the confirmation run at the answer")
	fs.Var(flags.Duration{D: &o.MaxTime}, "max-time", "--slo: bound on the whole search (`duration`)")
	fs.IntVar(&s.s.ServerPID, "server-pid", 0, "--slo: sample this server `PID`'s CPU over each step")
}

// searchOnly are the flags that mean nothing without --slo, and
// notWithSearch those a search decides itself.
var (
	searchOnly    = []string{"min-speed", "max-speed", "precision", "step-duration", "warmup", "no-confirm", "max-time", "server-pid"}
	notWithSearch = []string{"speed", "loop", "duration", "record", "dry-run", "threshold", "latency", "percentiles", "hdr-out"}
)

// check refuses the flags that do not go with (or without) --slo.
func (s *replaySearch) check(fs *pflag.FlagSet) error {
	if len(s.slo) == 0 {
		for _, n := range searchOnly {
			if fs.Changed(n) {
				return usagef("--%s applies to the speed search (--slo)", n)
			}
		}
		return nil
	}
	for _, n := range notWithSearch {
		if fs.Changed(n) {
			return usagef("--slo searches the speed, in steps of whole passes: drop --%s", n)
		}
	}
	if lo, hi := s.s.MinSpeed, s.s.MaxSpeed; !(lo > 0) || !(hi >= lo) || hi > 1e9 {
		return usagef("--min-speed %g, --max-speed %g: want 0 < min ≤ max ≤ 1e9", lo, hi)
	}
	return nil
}

// searchFlags reads the flags a speed search shares with capacity's
// (--slo, --precision, --no-confirm) into o.
func searchFlags(o *capacity.Options, slo []string, precision string, noConfirm bool) error {
	for _, e := range slo {
		th, err := results.ParseThreshold(e)
		if err != nil {
			return usagef("--slo: %s", cliMessage(err))
		}
		if err := capacity.CheckSLO(th); err != nil {
			return usagef("--slo %s", strings.TrimPrefix(cliMessage(err), "capacity: invalid options: "))
		}
		o.SLO = append(o.SLO, th)
	}
	p, err := capacity.ParsePrecision(precision)
	if err != nil {
		return usagef("--%s", strings.TrimPrefix(err.Error(), capacity.ErrOptions.Error()+": "))
	}
	o.Precision = p
	if noConfirm {
		o.ConfirmDuration = -1
	}
	return nil
}

// runReplaySearch is replay --slo: the highest speed at which the
// recording's replay meets the SLO.
func runReplaySearch(ctx context.Context, env *cliEnv, f *loadFlags, s *replaySearch, fs *pflag.FlagSet, target string, args []string) error {
	if err := searchFlags(&s.s.Capacity, s.slo, s.precision, s.noConfirm); err != nil {
		return err
	}
	s.s.Capacity.Concurrency = searchConcurrency
	if fs.Changed("concurrency") {
		s.s.Capacity.Concurrency = f.Options.Concurrency
	}
	if err := f.CheckLimits(); err != nil {
		return err
	}
	return f.speedSearch(ctx, env, fs, s.s, target, args, f.out, f.Force, f.quiet)
}

// runCapacityReplay is wirebench capacity --replay FILE URL: the search
// in speed, with capacity's flags; the rates not given are the
// recording's (replay.SpeedSearch).
func runCapacityReplay(ctx context.Context, env *cliEnv, f *capacityFlags, fs *pflag.FlagSet, args []string) error {
	if len(fs.Args()) != 1 {
		return usagef("want exactly one URL argument, got %d", len(fs.Args()))
	}
	o := f.opts
	for name, v := range map[string]*float64{"min-rate": &o.MinRate, "max-rate": &o.MaxRate, "start-rate": &o.StartRate, "growth": &o.Growth} {
		if !fs.Changed(name) {
			*v = 0
		}
	}
	s := replay.SpeedSearch{Capacity: o, ServerPID: f.serverPID}
	return f.lf.speedSearch(ctx, env, fs, s, fs.Arg(0), args, f.out, f.force, f.quiet)
}

// speedSearch runs s against target with the load flags' replay and
// connection options, and writes the capacity result.
func (f *loadFlags) speedSearch(ctx context.Context, env *cliEnv, fs *pflag.FlagSet, s replay.SpeedSearch, target string, args []string, out string, force, quiet bool) error {
	if out != "-" {
		if err := checkNewOut(out, force); err != nil {
			return err
		}
	}
	var err error
	f.Raw.URL, f.Raw.Timeout = target, f.Options.Timeout
	if s.Replay, err = f.ReplayOptions(fs, target); err != nil {
		return err
	}
	s.Base = f.Options
	rec, err := replay.Prepare(s.Replay)
	if err != nil {
		return usagef("%s", strings.TrimPrefix(err.Error(), "replay: "))
	}
	if err := pinCPUs(f.CPUs); err != nil {
		return err
	}
	base := rec.Rate()
	fmt.Fprintf(env.stderr, "  recording: %d requests, a pass of %v: %s at speed 1\n", rec.Requests, rec.Period.Round(time.Microsecond), results.FormatRate(base))
	if !quiet {
		s.Capacity.Progress = report.CapacityProgress(env.stderr, base)
	}
	res, err := replay.Search(ctx, rec, s)
	if err != nil {
		if errors.Is(err, capacity.ErrOptions) || errors.Is(err, load.ErrOptions) {
			return usagef("%s", strings.TrimPrefix(cliMessage(err), "capacity: invalid options: "))
		}
		return err
	}
	res.Config.Args, res.Link = args, f.link.result
	sum := summaryWriter(env, out)
	if err := results.WriteCapacitySummary(sum, res); err != nil {
		return err
	}
	results.WriteLinkSummary(sum, res.Link)
	fmt.Fprintf(sum, "  replay: %s\n", report.SpeedLine(res, base))
	if err := writeCapacityOut(env, out, force, res); err != nil {
		return err
	}
	return capacityExit(ctx, res, report.SpeedLine(res, base))
}

// writeCapacityOut writes --out (- for stdout).
func writeCapacityOut(env *cliEnv, out string, force bool, res *results.Capacity) error {
	switch out {
	case "":
		return nil
	case "-":
		return res.WriteJSON(env.stdout)
	}
	return results.WriteFile(out, force, res.WriteJSON)
}
