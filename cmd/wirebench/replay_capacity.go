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

// runReplaySearch is replay --slo: the highest speed at which the
// recording's replay meets the SLO.
func runReplaySearch(ctx context.Context, env *cliEnv, f *loadFlags, s *flags.Search, fs *pflag.FlagSet, target string, args []string) error {
	if err := s.Read(); err != nil {
		return err
	}
	s.Speeds.Capacity, s.Speeds.ServerPID = s.Options, s.ServerPID
	s.Speeds.Capacity.Concurrency = flags.SearchConcurrency
	if fs.Changed("concurrency") {
		s.Speeds.Capacity.Concurrency = f.Options.Concurrency
	}
	if err := f.CheckLimits(); err != nil {
		return err
	}
	return f.speedSearch(ctx, env, fs, s.Speeds, target, args, f.Out, f.Force, f.Quiet)
}

// runCapacityReplay is wirebench capacity --replay FILE URL: the search
// in speed, with capacity's flags; the rates not given are the
// recording's (replay.SpeedSearch).
func runCapacityReplay(ctx context.Context, env *cliEnv, f *capacityFlags, fs *pflag.FlagSet, args []string) error {
	if len(fs.Args()) != 1 {
		return usagef("want exactly one URL argument, got %d", len(fs.Args()))
	}
	o := f.search.Options
	for name, v := range map[string]*float64{"min-rate": &o.MinRate, "max-rate": &o.MaxRate, "start-rate": &o.StartRate, "growth": &o.Growth} {
		if !fs.Changed(name) {
			*v = 0
		}
	}
	s := replay.SpeedSearch{Capacity: o, ServerPID: f.search.ServerPID}
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
	if rec.Malformed > 0 {
		fmt.Fprintf(env.stderr, "  skipped    %d lines or entries (malformed or too large)\n", rec.Malformed)
		for _, e := range rec.Examples {
			fmt.Fprintf(env.stderr, "    %s\n", e)
		}
	}
	if p := rec.Partial(); p != "" && !f.Replay.AllowPartial {
		return fmt.Errorf("replay: partial: %s; --allow-partial accepts it", p)
	}
	if !quiet {
		s.Capacity.Progress = report.CapacityProgress(env.stderr, base)
	}
	res, err := replay.Search(ctx, rec, s)
	if err != nil {
		if errors.Is(err, capacity.ErrOptions) || errors.Is(err, load.ErrOptions) {
			return usagef("%s", strings.TrimPrefix(flags.Message(err), "capacity: invalid options: "))
		}
		return err
	}
	res.Config.Args, res.Link = args, f.link.runResult(env.stderr, res.End.Sub(res.Start))
	redactConfig(&res.Config)
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
