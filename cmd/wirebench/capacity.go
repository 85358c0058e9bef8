package main

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/spf13/pflag"

	"github.com/wirebench/wirebench/capacity"
	"github.com/wirebench/wirebench/load"
	"github.com/wirebench/wirebench/load/flags"
	"github.com/wirebench/wirebench/report"
	"github.com/wirebench/wirebench/results"
)

func init() {
	register("capacity", command{
		summary: "find the highest open-loop rate whose latency and errors meet an SLO (--slo 'p99<20ms')",
		run:     runCapacity,
	})
}

const capacityUsage = `--slo CRITERION [flags] URL

Searches open-loop rates for the highest one that meets every --slo
criterion: latency percentiles from the intended send time (p99<20ms,
p50<5ms, max<1s, avg<10ms) and errors (errors<0.1%). Rates grow by
--growth from --start-rate until a step fails, then are bisected until
the first failing rate is within --precision of the last passing one;
the answer is then confirmed by a longer run. A step counts only if the
client kept up; otherwise the client is reported as the limit. Steps
send Poisson arrivals (seeded exponential gaps: the bursts of real
traffic) unless --arrivals uniform; the answer names the process.
URL, scenarios, transports and protocols are load's (wirebench load -h).
See docs/capacity.md.
Exit status: 0 answered, 1 failed to run or no answer (the target never
answered, or the client could not keep up), 2 bad usage, 99 no rate met
the SLO.`

// loadTargetFlags are the load flags capacity shares: what to request and
// how (target syntax, scenarios, transports, protocols, TLS), not how
// much or for how long, which the search decides.
var loadTargetFlags = []string{
	"timeout", "method", "header", "body", "graceful-stop", "expect-status", "expect-body-contains",
	"no-keepalive", "client", "transport", "conns", "insecure", "cacert", "cert", "key",
	"scenario", "format", "arrivals", "arrivals-seed",
	"stream", "grpc", "messages", "compression", "cpu",
	"proto", "import-path", "protoset", "data", "expect", // --grpc METHOD: load_grpc.go
	"data-key", "message", // --scenario records (with data, proto, protoset)
	"replay", "replay-format", "replay-fields", "rewrite-host", "drop-header", "allow-partial", "max-gap", // replay_capacity.go
	"link", "link-calibrate", "link-check", // link.go
	"flow", "data-file", // load_flow.go: rates are iterations/s
}

type capacityFlags struct {
	lf           loadFlags
	search       flags.Search
	out          string
	force, quiet bool
}

func newCapacityFlags(env *cliEnv, f *capacityFlags) *pflag.FlagSet {
	fs := newFlagSet(env, "capacity", capacityUsage)
	f.search.RegisterRates(fs)
	fs.StringVar(&f.out, "out", "", "write the result (schema wirebench.capacity/v2) to this `file`; - for stdout")
	fs.BoolVar(&f.force, "force", false, "replace an existing --out file")
	fs.BoolVarP(&f.quiet, "quiet", "q", false, "no line per step on stderr")
	lfs := newLoadFlags(env, &f.lf) // never parsed: the shared flags are added here
	for _, name := range append(loadTargetFlags, flags.KVNames...) {
		fs.AddFlag(lfs.Lookup(name))
	}
	// A capacity is promised to users, whose requests come in bursts.
	f.lf.Arrivals = string(capacity.DefaultArrivals)
	a := fs.Lookup("arrivals")
	a.DefValue, a.Usage = f.lf.Arrivals, "steps' arrival `process`: poisson (exponential gaps, seeded: bursts as independent users make them; the default) or uniform (evenly spaced)"
	return fs
}

func runCapacity(ctx context.Context, env *cliEnv, args []string) error {
	var f capacityFlags
	fs := newCapacityFlags(env, &f)
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if len(f.search.SLO) == 0 {
		return usagef("--slo is required (e.g. --slo 'p99<20ms')")
	}
	if err := f.search.Read(); err != nil {
		return err
	}
	if done, err := f.lf.link.across(ctx, env, "capacity", args); done {
		return err
	}
	if err := f.lf.CheckArrivals(fs); err != nil {
		return err
	}
	f.search.Options.Arrivals, f.search.Options.Seed = f.lf.Options.Arrivals, f.lf.Options.Seed
	if f.search.Options.Concurrency < 1 {
		return usagef("-c %d: want at least 1", f.search.Options.Concurrency)
	}
	if f.out != "-" {
		if err := checkNewOut(f.out, f.force); err != nil {
			return err
		}
	}
	if err := pinCPUs(f.lf.CPUs); err != nil {
		return err
	}
	q, err := capacity.ParseQuota(f.search.Quota)
	if err != nil {
		return usagef("--server-cpu-quota: %v", err)
	}
	if q > 0 && f.search.ServerPID <= 0 {
		return usagef("--server-cpu-quota %s needs --server-pid: only a server named by its PID can be given a quota", f.search.Quota)
	}
	if f.lf.Replay.File != "" { // the search in speed: replay_capacity.go
		return runCapacityReplay(ctx, env, &f, fs, args)
	}
	if err := f.lf.Flow.Check(fs); err != nil {
		return err
	}
	m, err := f.lf.Made(ctx, fs, fs.Args())
	if err != nil {
		return err
	}
	defer m.Close()
	if !f.quiet {
		f.search.Options.Progress = report.CapacityProgress(env.stderr, 0)
	}
	res, err := capacity.RunServer(ctx, f.search.Options, f.lf.Options, m.Scenario, f.search.ServerPID, q, env.stderr)
	if err != nil {
		if errors.Is(err, capacity.ErrOptions) || errors.Is(err, load.ErrOptions) {
			return usagef("%s", strings.TrimPrefix(flags.Message(err), "capacity: invalid options: "))
		}
		return err
	}
	res.Scenario, res.Config = m.Config.Scenario, m.Config
	res.Config.Args = args
	redactConfig(&res.Config)
	res.Link = f.lf.link.runResult(env.stderr, res.End.Sub(res.Start))
	if err := results.WriteCapacitySummary(summaryWriter(env, f.out), res); err != nil {
		return err
	}
	results.WriteLinkSummary(summaryWriter(env, f.out), res.Link)
	if err := writeCapacityOut(env, f.out, f.force, res); err != nil {
		return err
	}
	return capacityExit(ctx, res, results.CapacityLine(res))
}

// sloMissed fails a search in which no rate met the SLO: exit 99, as a
// failed --threshold of load, worded as what it is.
type sloMissed struct{ line string }

func (e sloMissed) Error() string { return "SLO missed: " + e.line }
func (e sloMissed) ExitCode() int { return exitThreshold }

// capacityExit is how a search that wrote its result ends: nil only with
// an answer above 0/s. line is the answer as the summary words it.
func capacityExit(ctx context.Context, res *results.Capacity, line string) error {
	if res.Rate > 0 {
		return nil
	}
	if se, ok := interruption(ctx); ok {
		return exitError{se.ExitCode(), fmt.Errorf("%v before any rate met the SLO", se)}
	}
	if res.Limit == results.LimitMinRate || (res.Limit == results.LimitTime && res.High > 0) {
		return sloMissed{line}
	}
	if res.Limit == results.LimitFailed {
		return errors.New(strings.TrimPrefix(line, "none: "))
	}
	return fmt.Errorf("no answer: %s", line)
}
