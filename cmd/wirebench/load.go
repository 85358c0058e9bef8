package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"time"

	"golang.org/x/sys/unix"

	"github.com/wirebench/wirebench/load"
	"github.com/wirebench/wirebench/measure"
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

// thresholdError fails the command with exit code 99.
type thresholdError struct{ failed []string }

func (e thresholdError) Error() string {
	return "thresholds failed: " + strings.Join(e.failed, "; ")
}
func (e thresholdError) ExitCode() int { return exitThreshold }

// listFlag is a repeatable string flag.
type listFlag []string

func (l *listFlag) String() string     { return strings.Join(*l, ", ") }
func (l *listFlag) Set(s string) error { *l = append(*l, s); return nil }

type loadFlags struct {
	o                        load.Options
	raw                      load.RawOptions
	sc                       load.ScenarioOptions
	body, stages, segment    string
	expect, thresholds, hdrs listFlag
	scenario, out, cpus      string
	quiet                    bool
}

func runLoad(ctx context.Context, env *cliEnv, args []string) error {
	fs := newFlagSet(env, "load", "[flags] URL\n\n"+
		"URL is http://host:port/path; with --transport grpc, the gRPC API's host:port.\n"+
		"Raw mode (no --scenario) repeats one request against any HTTP server;\n"+
		"--scenario drives the reference API (wirebench serve) with checked responses.\n"+
		"Exit status: 0 ok, 1 run failed, 2 bad usage, 99 a --threshold failed.")
	var f loadFlags
	both := func(short, long string, fn func(name string)) { fn(short); fn(long) }
	both("c", "concurrency", func(n string) {
		fs.IntVar(&f.o.Concurrency, n, 0, "`VUs` (closed loop; one HTTP/1.1 connection each) or the cap on requests in flight (open loop); default 10")
	})
	both("n", "requests", func(n string) { fs.Int64Var(&f.o.Requests, n, 0, "send exactly `N` requests") })
	both("d", "duration", func(n string) {
		fs.DurationVar(&f.o.Duration, n, 0, "run for this `long` (default 10s unless -n or --stages)")
	})
	both("r", "rate", func(n string) {
		fs.Float64Var(&f.o.Rate, n, 0, "open loop at `R` requests/s; latency counts from the intended send time")
	})
	both("t", "timeout", func(n string) { fs.DurationVar(&f.o.Timeout, n, 10*time.Second, "per-request `timeout`") })
	both("m", "method", func(n string) { fs.StringVar(&f.raw.Method, n, "GET", "HTTP `method` (raw mode)") })
	both("H", "header", func(n string) { fs.Var(&f.hdrs, n, "request header `'K: V'` (repeatable)") })
	both("b", "body", func(n string) { fs.StringVar(&f.body, n, "", "request `body`, or @file to read it from a file") })
	fs.StringVar(&f.stages, "stages", "", "ramp `d:target,...` as k6 (VUs; rate with --open), e.g. 30s:50,1m:50,30s:100")
	fs.BoolVar(&f.o.Open, "open", false, "open loop: --stages ramp the arrival rate")
	fs.DurationVar(&f.o.GracefulStop, "graceful-stop", 2*time.Second, "let requests in flight at the end of -d finish for this `long`")
	fs.Var(&f.expect, "expect-status", "accepted `status` (repeatable or comma-separated; default any 2xx)")
	fs.StringVar(&f.raw.ExpectBodyContains, "expect-body-contains", "", "fail responses whose body lacks this `text`")
	fs.BoolVar(&f.raw.NoKeepAlive, "no-keepalive", false, "close and redial the connection after every request")
	fs.StringVar(&f.raw.Client, "client", load.ClientLean, "HTTP/1.1 `client`: lean (ours) or std (net/http)")
	engine := fs.String("engine", "loop", "raw lean HTTP/1.1 in closed loop runs on wrk-style event `loops` (loop) or one goroutine per VU (goroutine)")
	fs.StringVar(&f.raw.Transport, "transport", load.TransportHTTP1, "`transport`: http1, h2c, grpc (grpc with --scenario only)")
	fs.IntVar(&f.raw.Connections, "conns", 1, "h2c/gRPC: `connections` shared by the VUs (streams per connection = VUs/conns)")
	fs.StringVar(&f.scenario, "scenario", "", "reference-API `scenario`: crud, echo, get, list, create")
	fs.StringVar(&f.sc.Format, "format", "json", "scenario wire `format`: json, toon, protobuf, msgpack, cbor")
	fs.StringVar(&f.sc.Compression, "compression", "", "scenario: ask for gzip-coded responses (`gzip`) and decode them before the checks")
	fs.StringVar(&f.out, "out", "", "write the result (schema wirebench.load/v1) to this `file`")
	var outs outFlags // --hdr-out, --force
	outs.register(fs)
	fs.Var(&f.thresholds, "threshold", "pass/fail `criterion` (repeatable): p99<50ms, avg<10ms, errors<1%, rps>1000")
	fs.StringVar(&f.cpus, "cpu", "", "pin the client to these `CPUs` (e.g. 0 or 0-1,3) and record it")
	fs.StringVar(&f.segment, "segment", "", "run share `i/n` of the load (see wirebench merge)")
	fs.BoolVar(&f.quiet, "q", false, "no live status line")
	pos, err := parseInterspersed(fs, args)
	if err != nil {
		return err
	}
	if err := outs.check(f.out); err != nil {
		return err
	}
	switch *engine {
	case "loop":
		f.o.EventLoop = true
	case "goroutine":
	default:
		return usagef("--engine: want loop or goroutine, got %q", *engine)
	}
	sc, cfg, err := f.scenarioFrom(pos)
	if err != nil {
		return err
	}
	ths := make([]load.Threshold, len(f.thresholds))
	for i, s := range f.thresholds {
		if ths[i], err = load.ParseThreshold(s); err != nil {
			return usageError{err}
		}
	}
	if f.stages != "" {
		if f.o.Stages, err = load.ParseStages(f.stages); err != nil {
			return usageError{err}
		}
	}
	if f.segment != "" {
		if f.o.Segment, err = load.ParseSegment(f.segment); err != nil {
			return usageError{err}
		}
	}
	if f.cpus != "" {
		cpus, err := parseCPUList(f.cpus)
		if err != nil {
			return usageError{err}
		}
		if err := measure.Pin(cpus); err != nil {
			return err
		}
	}
	if !f.quiet && isTerminal(env.stderr) {
		f.o.Progress = load.ProgressBar(env.stderr, f.o)
	}

	res, err := load.Run(ctx, f.o, sc)
	if c, ok := sc.(io.Closer); ok {
		c.Close()
	}
	if f.o.Progress != nil {
		fmt.Fprint(env.stderr, "\r\033[K")
	}
	if err != nil {
		if errors.Is(err, load.ErrOptions) {
			return usageError{err}
		}
		return err
	}
	res.Scenario = cfg["scenario"].(string)
	cfg["args"] = args
	res.Config = cfg
	res.Env = measure.Environment(ctx)
	if err := load.WriteSummary(env.stdout, res); err != nil {
		return err
	}
	if err := outs.write(f.out, res); err != nil {
		return err
	}
	return checkThresholds(env.stdout, res, ths)
}

// scenarioFrom builds the scenario from the flags: raw mode with a URL,
// or a reference-API scenario.
func (f *loadFlags) scenarioFrom(pos []string) (load.Scenario, map[string]any, error) {
	if len(pos) != 1 {
		return nil, nil, usagef("want exactly one URL argument, got %d", len(pos))
	}
	url := pos[0]
	if f.o.Timeout <= 0 {
		return nil, nil, usagef("-t must be > 0")
	}
	f.raw.URL, f.raw.Timeout, f.raw.Header = url, f.o.Timeout, f.hdrs
	for _, e := range f.expect {
		for _, s := range strings.Split(e, ",") {
			n, err := strconv.Atoi(strings.TrimSpace(s))
			if err != nil {
				return nil, nil, usagef("--expect-status %q: not a number", s)
			}
			f.raw.ExpectStatus = append(f.raw.ExpectStatus, n)
		}
	}
	if f.scenario != "" {
		f.sc.Name, f.sc.URL, f.sc.Transport = f.scenario, url, f.raw.Transport
		f.sc.Connections, f.sc.Timeout, f.sc.NoKeepAlive = f.raw.Connections, f.o.Timeout, f.raw.NoKeepAlive
		sc, err := load.NewScenario(f.sc)
		if err != nil {
			return nil, nil, usageError{err}
		}
		return sc, map[string]any{"scenario": f.scenario, "scenario_options": f.sc}, nil
	}
	if strings.HasPrefix(f.body, "@") {
		b, err := os.ReadFile(f.body[1:])
		if err != nil {
			return nil, nil, usagef("-b: %v", err)
		}
		f.raw.Body = b
	} else if f.body != "" {
		f.raw.Body = []byte(f.body)
	}
	sc, err := load.NewRaw(f.raw)
	if err != nil {
		return nil, nil, usageError{err}
	}
	return sc, map[string]any{"scenario": "raw", "raw": sc.Options(), "body_bytes": len(f.raw.Body)}, nil
}

func checkThresholds(w io.Writer, res *load.Result, ths []load.Threshold) error {
	if len(ths) == 0 {
		return nil
	}
	var failed []string
	fmt.Fprintln(w, "\n  thresholds")
	for _, th := range ths {
		got, ok := th.Check(res)
		mark := "✓"
		if !ok {
			mark = "✗"
			failed = append(failed, fmt.Sprintf("%s (measured %s)", th.Expr, got))
		}
		fmt.Fprintf(w, "    %s %-20s measured %s\n", mark, th.Expr, got)
	}
	if len(failed) > 0 {
		return thresholdError{failed}
	}
	return nil
}

// parseCPUList reads "0", "0-3", "0,2-3".
func parseCPUList(s string) ([]int, error) {
	var out []int
	for _, part := range strings.Split(s, ",") {
		a, b, isRange := strings.Cut(strings.TrimSpace(part), "-")
		lo, err1 := strconv.Atoi(a)
		hi, err2 := lo, error(nil)
		if isRange {
			hi, err2 = strconv.Atoi(b)
		}
		if err1 != nil || err2 != nil || lo < 0 || hi < lo {
			return nil, fmt.Errorf("--cpu %q: want a list such as 0 or 0-1,3", s)
		}
		for c := lo; c <= hi; c++ {
			out = append(out, c)
		}
	}
	return out, nil
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
