package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/spf13/pflag"
	"golang.org/x/sys/unix"

	"github.com/wirebench/wirebench/load"
	"github.com/wirebench/wirebench/load/flags"
	"github.com/wirebench/wirebench/load/spec"
	"github.com/wirebench/wirebench/measure"
	"github.com/wirebench/wirebench/report"
	"github.com/wirebench/wirebench/results"
)

// exitThreshold is the exit code of a run whose --threshold failed: not 1
// (the run itself failed) nor 2 (usage), so scripts can tell them apart.
const exitThreshold = 99

func init() {
	register("load", command{
		summary: "generate load: raw HTTP against any server, or scenarios against the reference API",
		run:     runLoad,
	})
}

// loadFlags are load's: what to send (load/flags' Load, shared with
// replay and capacity), and what to do with the result.
type loadFlags struct {
	flags.Load
	flags.Output
	cpuprofile string
	version    bool
	export     exportFlags // --prometheus-rw, --traceparent, --slowest…
	link       linkFlags   // --link: link.go
}

const loadUsage = `[flags] URL

URL is http(s)://host:port/path; with --transport grpc, the gRPC API's host:port.
Raw mode (no --scenario) repeats one request against any HTTP server;
--scenario drives the reference API (wirebench serve) with checked responses.
Short flags may be glued to their value (-c50 -d5s -n1000); -d and -t take
a duration (5s, 1m30s) or a number of seconds.
Exit status: 0 ok, 1 run failed (the target was unreachable or no request
succeeded), 2 bad usage, 99 a --threshold failed.`

func newLoadFlags(env *cliEnv, f *loadFlags) *pflag.FlagSet {
	fs := newFlagSet(env, "load", loadUsage)
	f.Register(fs)
	f.RegisterOutput(fs, &f.Force, "write the result (schema wirebench.load/v2) to this `file`; - for stdout as a JSON line; dir/ for dir/segment-i-of-n.json")
	f.export.register(fs, f)
	f.link.register(fs)
	fs.StringVar(&f.cpuprofile, "cpuprofile", "", "write a CPU profile of the client's run to `file` (go tool pprof)")
	fs.BoolVar(&f.version, "version", false, "print the version and exit")
	fs.Lookup("duration").DefValue = "" // its help says the default
	return fs
}

func runLoad(ctx context.Context, env *cliEnv, args []string) error {
	var f loadFlags
	fs := newLoadFlags(env, &f)
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if f.version {
		fmt.Fprintln(env.stdout, "wirebench", version())
		return nil
	}
	// With --link the client runs on the far side of the link: this
	// command again, in the link's namespace (link.go).
	if done, err := f.link.across(ctx, env, "load", args); done {
		return err
	}
	return f.run(ctx, env, fs, args, fs.Args())
}

// run is load once its flags are parsed (pos: the URL); wirebench
// replay shares it.
func (f *loadFlags) run(ctx context.Context, env *cliEnv, fs *pflag.FlagSet, args, pos []string) error {
	if err := f.Check(fs); err != nil {
		return err
	}
	if err := f.export.check(fs, f); err != nil {
		return err
	}
	if err := f.Dist.Apply(f.Segment, &f.Options, os.Getenv); err != nil {
		return err
	}
	if err := f.Output.Prepare(f.Options.Segment); err != nil {
		return err
	}
	m, err := f.Made(ctx, fs, pos)
	if err != nil {
		return err
	}
	ths, pcts, err := f.Read()
	if err != nil {
		return err
	}
	if err := pinCPUs(f.CPUs); err != nil {
		return err
	}
	if !f.Quiet && isTerminal(env.stderr) {
		f.Options.Progress = load.ProgressBar(env.stderr, f.Options)
	}
	exp, err := f.export.start(&f.Options, env.stderr)
	if err != nil {
		return err
	}

	if f.cpuprofile != "" {
		stop, err := startCPUProfile(f.cpuprofile)
		if err != nil {
			return err
		}
		defer stop()
	}
	m.Options = f.Options  // with the live line and export's hooks
	res, err := m.Run(ctx) // closed; interrupted and close troubles recorded
	if f.Options.Progress != nil {
		fmt.Fprint(env.stderr, "\r\033[K")
	}
	if err != nil {
		finishExport(ctx, exp, nil, env.stderr)
		if errors.Is(err, load.ErrOptions) {
			return usagef("%s", flags.Message(err))
		}
		if sig, ok := interruption(ctx); ok { // before the first request: nothing to write
			return exitError{sig.ExitCode(), fmt.Errorf("%v while starting: no result", sig)}
		}
		return err
	}
	sig, interrupted := interruption(ctx)
	res.Config.Args = args
	redactConfig(&res.Config)
	res.Config.Thresholds = f.Thresholds // wirebench merge evaluates them on the merged result
	res.Link = f.link.runResult(env.stderr, res.Elapsed())
	finishExport(ctx, exp, res, env.stderr)
	sum := summaryWriter(env, f.Out)
	var text report.LoadText
	text.Percentiles = pcts
	if st, ok := m.RecordStats(); ok {
		text.Record = flags.RecordLine("--record", st)
	}
	if run, ok := m.Replayed(res); ok {
		text.Replay = &run
	}
	if err := report.WriteLoad(sum, res, text); err != nil {
		return err
	}
	if interrupted {
		fmt.Fprintf(sum, "\n  INTERRUPTED by %s after %v%s: a partial result\n", signalName(sig.sig), res.Measured().Round(time.Millisecond), spec.Planned(f.Options))
	}
	// The verdicts go into --out, so that report and compare show them.
	judged, thErr := judge(sum, res, ths)
	if !judged && len(ths) > 0 {
		fmt.Fprintln(sum, "\n  thresholds: evaluated by wirebench merge on the merged result")
	}
	if err := f.Output.Write(env.stdout, res); err != nil {
		return err
	}
	if interrupted {
		return exitError{sig.ExitCode(), fmt.Errorf("%v after %v: partial result", sig, res.Measured().Round(time.Millisecond))}
	}
	if thErr != nil {
		return thErr
	}
	if !f.Replay.AllowPartial {
		if err := m.Partial(res); err != nil {
			return err
		}
	}
	return results.CheckSuccess(res) // exit status 1: a script sees what the summary shows
}

// exitError is an error with its own exit code.
type exitError struct {
	code int
	err  error
}

func (e exitError) Error() string { return e.err.Error() }
func (e exitError) Unwrap() error { return e.err }
func (e exitError) ExitCode() int { return e.code }

// judge records and prints the thresholds' verdicts (results.Judge): a
// failed one fails the command with exit code 99.
func judge(w io.Writer, res *results.Load, ths []results.Threshold) (judged bool, err error) {
	judged, err = results.Judge(res, ths)
	report.WriteThresholds(w, res.Thresholds)
	if err != nil {
		return judged, exitError{exitThreshold, err}
	}
	return judged, nil
}

// pinCPUs pins the client to --cpu's list (none when empty).
func pinCPUs(list string) error {
	if err := measure.PinList(list); errors.Is(err, measure.ErrCPUList) {
		return usagef("--cpu %s", strings.TrimPrefix(err.Error(), measure.ErrCPUList.Error()+": "))
	} else if err != nil {
		return err
	}
	return nil
}

// isTerminal reports whether w is a terminal: the live line is for people,
// not for logs.
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	_, err := unix.IoctlGetTermios(int(f.Fd()), unix.TCGETS)
	return err == nil
}
