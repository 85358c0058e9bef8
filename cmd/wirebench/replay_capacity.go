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
	"github.com/wirebench/wirebench/load/replay"
	"github.com/wirebench/wirebench/measure"
	"github.com/wirebench/wirebench/report"
	"github.com/wirebench/wirebench/results"
)

// Bounds of replay's speed search (--min-speed, --max-speed defaults).
const (
	defaultMinSpeed = 0.01
	defaultMaxSpeed = 100
	// searchConcurrency caps a search's requests in flight unless -c
	// says otherwise: each step sizes its workers to its rate and SLO up
	// to it.
	searchConcurrency = 256
)

// replaySearch are replay's flags for "how much faster within the SLO":
// capacity's search, in speed.
type replaySearch struct {
	slo                []string
	precision          string
	minSpeed, maxSpeed float64
	opts               capacity.Options
	noConfirm          bool
	serverPID          int
}

func (s *replaySearch) register(fs *pflag.FlagSet) {
	fs.StringArrayVar(&s.slo, "slo", nil, "search the highest --speed that meets this `criterion` (repeatable): p99<20ms, errors<0.1% (docs/replay.md)")
	fs.Float64Var(&s.minSpeed, "min-speed", defaultMinSpeed, "--slo: lowest `speed` to try")
	fs.Float64Var(&s.maxSpeed, "max-speed", defaultMaxSpeed, "--slo: highest `speed` to try")
	fs.StringVar(&s.precision, "precision", "5%", "--slo: stop when the first failing speed is within this `fraction` of the last passing one")
	s.opts.StepDuration, s.opts.Warmup, s.opts.MaxTime = capacity.DefaultStepDuration, capacity.DefaultWarmup, capacity.DefaultMaxTime
	fs.Var(durationFlag{&s.opts.StepDuration}, "step-duration", "--slo: each step's `length`, rounded to whole passes of the recording (at least one)")
	fs.Var(durationFlag{&s.opts.Warmup}, "warmup", "--slo: replay this `long` at each step's speed before its window")
	fs.BoolVar(&s.noConfirm, "no-confirm", false, "--slo: skip the confirmation run at the answer")
	fs.Var(durationFlag{&s.opts.MaxTime}, "max-time", "--slo: bound on the whole search (`duration`)")
	fs.IntVar(&s.serverPID, "server-pid", 0, "--slo: sample this server `PID`'s CPU over each step")
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
	if !(s.minSpeed > 0) || !(s.maxSpeed >= s.minSpeed) || s.maxSpeed > 1e9 {
		return usagef("--min-speed %g, --max-speed %g: want 0 < min ≤ max ≤ 1e9", s.minSpeed, s.maxSpeed)
	}
	return nil
}

// runReplaySearch searches the highest speed at which the recording's
// replay meets the SLO, with capacity's search: its rates are the
// recording's own rate × speed.
func runReplaySearch(ctx context.Context, env *cliEnv, f *loadFlags, s *replaySearch, fs *pflag.FlagSet, target string, args []string) error {
	for _, e := range s.slo {
		th, err := results.ParseThreshold(e)
		if err != nil {
			return usagef("--slo: %s", cliMessage(err))
		}
		s.opts.SLO = append(s.opts.SLO, th)
	}
	p, err := parsePrecision(s.precision)
	if err != nil {
		return usagef("%v", err)
	}
	s.opts.Precision = p
	if s.noConfirm {
		s.opts.ConfirmDuration = -1
	}
	s.opts.Concurrency = searchConcurrency
	if fs.Changed("concurrency") {
		s.opts.Concurrency = f.o.Concurrency
	}
	if err := f.checkLimits(); err != nil {
		return err
	}
	if f.out != "-" {
		if err := checkNewOut(f.out, f.outs.force); err != nil {
			return err
		}
	}
	ro, err := f.replayOptions(target)
	if err != nil {
		return err
	}
	return runSpeedSearch(ctx, env, speedSearch{link: f.link.result, ro: ro, opts: s.opts, base: f.o, serverPID: s.serverPID, out: f.out,
		force: f.outs.force, quiet: f.quiet, cpus: f.cpus, args: args,
		rates: func(o *capacity.Options, base float64) {
			o.MinRate, o.MaxRate = s.minSpeed*base, s.maxSpeed*base
			o.StartRate, o.Growth = min(max(base, o.MinRate), o.MaxRate), 2 // speed 1 first: the recording as it was
		}})
}

// speedSearch is one search of a replay's speed: wirebench replay --slo
// and wirebench capacity --replay.
type speedSearch struct {
	ro        replay.Options
	opts      capacity.Options // all but the rates
	rates     func(o *capacity.Options, base float64)
	base      load.Options // each step's engine options (timeout, graceful stop)
	serverPID int
	out, cpus string
	force     bool
	quiet     bool
	args      []string
	link      *results.Link // --link: the far side's record
}

// runSpeedSearch surveys the recording, searches, and writes the
// capacity result with the answer in speed.
func runSpeedSearch(ctx context.Context, env *cliEnv, r speedSearch) error {
	sc, err := replay.New(r.ro) // the target, transport and file, before the survey reads it all
	if err != nil {
		return usagef("%s", strings.TrimPrefix(err.Error(), "replay: "))
	}
	sc.Close()
	rec, err := replay.Survey(r.ro)
	if err != nil {
		return usagef("%s", strings.TrimPrefix(err.Error(), "replay: "))
	}
	base := rec.Rate()
	r.rates(&r.opts, base)
	if err := pinCPUs(r.cpus); err != nil {
		return err
	}
	log := env.stderr
	fmt.Fprintf(log, "  recording: %d requests, a pass of %v: %s at speed 1\n", rec.Requests, rec.Period.Round(time.Microsecond), results.FormatRate(base))
	if !r.quiet {
		r.opts.Progress = report.CapacityProgress(log, base)
	}
	res, err := capacity.Search(ctx, r.opts, replay.CapacityStep(r.ro, rec, r.base, r.opts.Warmup, r.serverPID))
	if err != nil {
		if errors.Is(err, capacity.ErrOptions) || errors.Is(err, load.ErrOptions) {
			return usagef("%s", strings.TrimPrefix(cliMessage(err), "capacity: invalid options: "))
		}
		return err
	}
	res.Scenario = "replay"
	res.Config = results.Config{Args: r.args, Replay: results.NewClientOptions(r.ro),
		Recording: &results.Recording{Requests: rec.Requests, Period: rec.Period, Rate: base, Malformed: rec.Malformed},
		Speed:     &results.SpeedRange{Answer: res.Rate / base, Low: res.Low / base, High: res.High / base}}
	res.Env = measure.Environment(context.WithoutCancel(ctx))
	res.Link = r.link
	sum := summaryWriter(env, r.out)
	if err := results.WriteCapacitySummary(sum, res); err != nil {
		return err
	}
	results.WriteLinkSummary(sum, res.Link)
	fmt.Fprintf(sum, "  replay: %s\n", report.SpeedLine(res, base))
	if err := writeCapacityOut(env, r.out, r.force, res); err != nil {
		return err
	}
	return capacityExit(ctx, res, report.SpeedLine(res, base))
}

// runCapacityReplay is wirebench capacity --replay FILE URL: the search
// in speed, with capacity's flags. Rates not given are the recording's:
// --start-rate its own (speed 1), --min-rate and --max-rate 0.01× and
// 100×, --growth 2.
func runCapacityReplay(ctx context.Context, env *cliEnv, f *capacityFlags, fs *pflag.FlagSet, args []string) error {
	if len(fs.Args()) != 1 {
		return usagef("want exactly one URL argument, got %d", len(fs.Args()))
	}
	f.lf.replay.fs = fs
	f.lf.raw.URL, f.lf.raw.Timeout = fs.Arg(0), f.lf.o.Timeout
	ro, err := f.lf.replayOptions(fs.Arg(0))
	if err != nil {
		return err
	}
	given := func(name string, v, def float64) float64 {
		if fs.Changed(name) {
			return v
		}
		return def
	}
	return runSpeedSearch(ctx, env, speedSearch{link: f.lf.link.result, ro: ro, opts: f.opts, base: f.lf.o, serverPID: f.serverPID, out: f.out,
		force: f.force, quiet: f.quiet, args: args,
		rates: func(o *capacity.Options, base float64) {
			o.MinRate = given("min-rate", o.MinRate, defaultMinSpeed*base)
			o.MaxRate = given("max-rate", o.MaxRate, defaultMaxSpeed*base)
			o.StartRate = given("start-rate", o.StartRate, min(max(base, o.MinRate), o.MaxRate))
			o.Growth = given("growth", o.Growth, 2)
		}})
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
