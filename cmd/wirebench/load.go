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

	"github.com/spf13/pflag"
	"golang.org/x/sys/unix"

	"github.com/wirebench/wirebench/load"
	"github.com/wirebench/wirebench/load/browser"
	"github.com/wirebench/wirebench/load/conn"
	"github.com/wirebench/wirebench/load/flags"
	"github.com/wirebench/wirebench/load/scenario"
	"github.com/wirebench/wirebench/load/spec"
	"github.com/wirebench/wirebench/load/stream"
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

type loadFlags struct {
	o                        load.Options
	raw                      load.RawOptions
	sc                       scenario.Options
	kv                       flags.KV // --scenario kv-*: load_kv.go
	body, stages, segment    string
	expect, thresholds, hdrs []string
	scenario, out, cpus      string
	cpuprofile               string
	stream                   stream.Options
	browser                  browser.Options
	engine, percentiles      string
	arrivals                 string
	quiet, latency, version  bool
	outs                     outFlags // --hdr-out, --force
	dist                     distFlags
	export                   exportFlags  // --prometheus-rw, --traceparent, --slowest…
	replay                   replayFlags  // --replay, --record: replay.go
	flow                     flowFlags    // --flow, --data-file: load_flow.go
	link                     linkFlags    // --link: link.go
	grpc                     grpcFlags    // --grpc METHOD: load_grpc.go
	records                  recordsFlags // --scenario records: load_records.go
	// ctx and fs are the command's, for the scenarios that connect while
	// they are made (--grpc's reflection) or read which flags were given.
	ctx context.Context
	fs  *pflag.FlagSet
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
	fs.IntVarP(&f.o.Concurrency, "concurrency", "c", 10, "`VUs` (closed loop; one HTTP/1.1 connection each) or the cap on requests in flight (open loop)")
	fs.Int64VarP(&f.o.Requests, "requests", "n", 0, "send exactly `N` requests")
	fs.VarP(flags.Duration{D: &f.o.Duration}, "duration", "d", "run for this `long` (default 10s unless -n or --stages)")
	fs.Float64VarP(&f.o.Rate, "rate", "r", 0, "open loop at `R` requests/s; latency counts from the intended send time")
	f.o.Timeout = 10 * time.Second
	fs.VarP(flags.Duration{D: &f.o.Timeout}, "timeout", "t", "per-request `timeout`")
	fs.StringVarP(&f.raw.Method, "method", "m", "GET", "HTTP `method` (raw mode)")
	fs.StringArrayVarP(&f.hdrs, "header", "H", nil, "request header `'K: V'` (repeatable)")
	fs.StringVarP(&f.body, "body", "b", "", "request `body`, or @file to read it from a file")
	fs.StringVar(&f.stages, "stages", "", "ramp `d:target,...` as k6 (VUs; rate with --open), e.g. 30s:50,1m:50,30s:100")
	fs.BoolVar(&f.o.Open, "open", false, "open loop: --stages ramp the arrival rate")
	fs.StringVar(&f.arrivals, "arrivals", string(results.Uniform), "open loop's arrival `process`: uniform (evenly spaced) or poisson (exponential gaps, seeded: bursts as independent users make them)")
	fs.Uint64Var(&f.o.Seed, "arrivals-seed", 0, "`seed` of --arrivals poisson (0: 1); the same seed sends the same schedule")
	f.o.GracefulStop = 2 * time.Second
	fs.Var(flags.Duration{D: &f.o.GracefulStop}, "graceful-stop", "let requests in flight at the end of -d finish for this `long`")
	fs.StringSliceVar(&f.expect, "expect-status", nil, "accepted `status` (repeatable or comma-separated; default any 2xx)")
	fs.StringVar(&f.raw.ExpectBodyContains, "expect-body-contains", "", "fail responses whose body lacks this `text`")
	fs.BoolVar(&f.raw.NoKeepAlive, "no-keepalive", false, "close and redial the connection after every request (HTTP/1.1; https then skips the ALPN probe)")
	fs.StringVar(&f.raw.Client, "client", conn.ClientLean, "`client`: lean (ours) or std (net/http on HTTP/1.1, grpc-go on gRPC; https then skips the ALPN probe); HTTP/2 runs on x/net's")
	fs.StringVar(&f.engine, "engine", "loop", "raw lean HTTP/1.1 in closed loop runs on wrk-style event `loops` (loop) or one goroutine per VU (goroutine)")
	fs.StringVar(&f.raw.Transport, "transport", "", "`transport`: http1, h2 (HTTP/2 over TLS), h2c, h3 (HTTP/3 over QUIC, https://), auto (https://: h3 if the first request's Alt-Svc offers it, else h2 or http1), grpc (grpc with --scenario only); default http1, or h2 when https:// and the server offers it")
	fs.IntVar(&f.raw.Connections, "conns", 1, "h2c/h2/h3/gRPC: `connections` shared by the VUs (streams per connection = VUs/conns)")
	fs.BoolVarP(&f.raw.Insecure, "insecure", "k", false, "https: do not verify the server's certificate")
	fs.StringVar(&f.raw.CAFile, "cacert", "", "https: verify the server against the CA certificates in this PEM `file`")
	fs.BoolVar(&f.raw.NoLayers, "no-layers", false, "h3: leave the bytes split by layer inside QUIC out of the result (quic-go then builds no trace events: the client costs what a bare quic-go loop does)")
	fs.BoolVar(&f.raw.ZeroRTT, "0rtt", false, "h3 (raw mode, --scenario): resume a session ticket and send each connection's first GET/HEAD as 0-RTT early data (the server must allow it: serve --h3-0rtt)")
	fs.StringVar(&f.raw.CertFile, "cert", "", "https: client certificate (PEM `file`), with --key")
	fs.StringVar(&f.raw.KeyFile, "key", "", "https: client certificate's private key (PEM `file`)")
	fs.StringVar(&f.scenario, "scenario", "", "reference-API `scenario`: crud, echo, get, list, create, records (serve --data: with --data FILE); or a key-value one: kv-set, kv-get, kv-mixed")
	f.kv.Register(fs)
	fs.StringVar(&f.sc.Format, "format", "json", "scenario wire `format`: json, toon, protobuf, msgpack, cbor (--flow: re-encodes its JSON steps for the reference API)")
	fs.StringVar(&f.stream.Kind, "stream", "", "stream `kind` against the reference server's REST port URL (see stream.Kinds): grpc-server-stream, grpc-bidi, ndjson, sse, websocket, connect-get, tunnel-get, ...")
	fs.StringVar(&f.stream.GRPC, "grpc", "127.0.0.1:9090", "`pkg.Service/Method` to call on the host:port URL (any gRPC server: --proto, --protoset or its reflection; --data); with --stream, the gRPC address (host:port) of the native gRPC kinds")
	fs.IntVar(&f.stream.Messages, "messages", 100, "--stream: `messages` per bidi, client-stream or WebSocket exchange")
	fs.StringVar(&f.browser.Kind, "browser", "", "run the in-browser page's `kind` in headless chromium against the REST port URL: fetch-json, connect, grpc-web, ws-tunnel, connect-stream, ws-tunnel-stream (-c 1)")
	fs.IntVar(&f.browser.Batch, "batch", 50, "--browser: calls per operation (the page times each)")
	fs.StringVar(&f.sc.Compression, "compression", "", "scenario: ask for gzip-coded responses (`gzip`) and decode them before the checks")
	fs.BoolVar(&f.latency, "latency", false, "print the latency distribution (wrk's --latency: 50, 75, 90, 99%)")
	fs.StringVar(&f.percentiles, "percentiles", "", "print the latency at these `percentiles`, e.g. 50,90,99,99.9")
	fs.StringVar(&f.out, "out", "", "write the result (schema wirebench.load/v2) to this `file`; - for stdout as a JSON line; dir/ for dir/segment-i-of-n.json")
	f.outs.register(fs) // --hdr-out, --force
	fs.StringArrayVar(&f.thresholds, "threshold", nil, "pass/fail `criterion` (repeatable): p99<50ms, avg<10ms, errors<1%, rps>1000")
	fs.StringVar(&f.cpus, "cpu", "", "pin the client to these `CPUs` (e.g. 0 or 0-1,3) and record it")
	fs.StringVar(&f.segment, "segment", "", "run share `i/n` of the load, or auto/n: i = $JOB_COMPLETION_INDEX+1 (see wirebench merge)")
	f.dist.register(fs) // --start-at, --barrier…
	f.export.register(fs, f)
	f.replay.register(fs)  // --replay, --speed, --record…: replay.go
	f.flow.register(fs)    // --flow, --data-file: load_flow.go
	f.link.register(fs)    // --link…: link.go
	f.grpc.register(fs)    // --proto, --data…: load_grpc.go
	f.records.register(fs) // --data-key, --message: load_records.go
	fs.BoolVarP(&f.quiet, "quiet", "q", false, "no live status line")
	fs.StringVar(&f.cpuprofile, "cpuprofile", "", "write a CPU profile of the client's run to `file` (go tool pprof)")
	fs.BoolVar(&f.version, "version", false, "print the version and exit")
	fs.Lookup("duration").DefValue = "" // its help says the default
	return fs
}

// loadUsagef is a one-line usage error (run adds where to look).
func loadUsagef(format string, a ...any) error { return usagef(format, a...) }

// cliMessage is err's text without the library's "load: ..." prefixes.
func cliMessage(err error) string { return flags.Message(err) }

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
	f.ctx, f.fs = ctx, fs
	if err := f.check(fs); err != nil {
		return err
	}
	if err := f.export.check(fs, f); err != nil {
		return err
	}
	if err := f.checkReplayFlags(); err != nil {
		return err
	}
	if err := f.flow.check(fs); err != nil {
		return err
	}
	if f.stages != "" {
		var err error
		if f.o.Stages, err = load.ParseStages(f.stages); err != nil {
			return loadUsagef("--stages: %s", cliMessage(err))
		}
		if err := checkStages(f.o.Stages, f.o.Open); err != nil {
			return err
		}
	}
	if err := f.dist.apply(f.segment, &f.o, os.Getenv); err != nil {
		return err
	}
	out, err := segmentOut(f.out, f.o.Segment)
	if err != nil {
		return err
	}
	f.out = out
	if err := f.outs.check(f.out); err != nil {
		return err
	}
	if f.engine == "loop" {
		f.o.EventLoop = true
	}
	m, err := f.scenarioFrom(pos)
	if err != nil {
		return err
	}
	ths := make([]results.Threshold, len(f.thresholds))
	for i, s := range f.thresholds {
		if ths[i], err = results.ParseThreshold(s); err != nil {
			return loadUsagef("--threshold: %s", cliMessage(err))
		}
	}
	var pcts []float64
	if f.latency {
		pcts = results.WrkPercentiles
	}
	if f.percentiles != "" {
		if pcts, err = results.ParsePercentiles(f.percentiles); err != nil {
			return loadUsagef("--percentiles: %s", cliMessage(err))
		}
	}
	if err := pinCPUs(f.cpus); err != nil {
		return err
	}
	if !f.quiet && isTerminal(env.stderr) {
		f.o.Progress = load.ProgressBar(env.stderr, f.o)
	}
	exp, err := f.export.start(&f.o, env.stderr)
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
	m.Options = f.o        // with the live line and export's hooks
	res, err := m.Run(ctx) // closed; interrupted and close troubles recorded
	if f.o.Progress != nil {
		fmt.Fprint(env.stderr, "\r\033[K")
	}
	if err != nil {
		finishExport(ctx, exp, nil, env.stderr)
		if errors.Is(err, load.ErrOptions) {
			return loadUsagef("%s", cliMessage(err))
		}
		if sig, ok := interruption(ctx); ok { // before the first request: nothing to write
			return exitError{sig.ExitCode(), fmt.Errorf("%v while starting: no result", sig)}
		}
		return err
	}
	sig, interrupted := interruption(ctx)
	res.Config.Args = args
	res.Config.Thresholds = f.thresholds // wirebench merge evaluates them on the merged result
	res.Link = f.link.result
	finishExport(ctx, exp, res, env.stderr)
	sum := summaryWriter(env, f.out)
	if err := results.WriteSummary(sum, res); err != nil {
		return err
	}
	results.WriteLinkSummary(sum, res.Link)
	report.WriteConn(sum, res.Conn)
	if err := results.WriteStreamSummary(sum, res); err != nil {
		return err
	}
	if err := results.WriteKVSummary(sum, res); err != nil {
		return err
	}
	if err := results.WriteLayerSummary(sum, res); err != nil {
		return err
	}
	if line := results.SlowestLine(res.Exemplars); line != "" {
		fmt.Fprintf(sum, "\n  %s\n", line)
	}
	writeReplaySummary(sum, m, res)
	if len(pcts) > 0 {
		if err := results.WriteDistribution(sum, res, pcts); err != nil {
			return err
		}
	}
	if interrupted {
		fmt.Fprintf(sum, "\n  INTERRUPTED by %s after %v%s: a partial result\n", signalName(sig.sig), res.Measured().Round(time.Millisecond), spec.Planned(f.o))
	}
	// The verdicts go into --out, so that report and compare show them.
	judged, thErr := judge(sum, res, ths)
	if !judged && len(ths) > 0 {
		fmt.Fprintln(sum, "\n  thresholds: evaluated by wirebench merge on the merged result")
	}
	if err := f.outs.write(env, f.out, res); err != nil {
		return err
	}
	if interrupted {
		return exitError{sig.ExitCode(), fmt.Errorf("%v after %v: partial result", sig, res.Measured().Round(time.Millisecond))}
	}
	if thErr != nil {
		return thErr
	}
	if !f.replay.allowPartial {
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

// check refuses flags that contradict each other, with one line each.
func (f *loadFlags) check(fs *pflag.FlagSet) error {
	switch {
	case f.stages != "" && fs.Changed("duration"):
		return loadUsagef("--stages sets the run's length: drop -d")
	case f.stages != "" && fs.Changed("rate"):
		return loadUsagef("--stages with -r: for a ramping rate use --stages with --open (targets are req/s)")
	case f.engine != "loop" && f.engine != "goroutine":
		return loadUsagef("--engine: want loop or goroutine, got %q", f.engine)
	case f.o.Open && f.o.Rate == 0 && f.stages == "":
		return loadUsagef("--open needs -r or --stages")
	case (f.raw.CertFile == "") != (f.raw.KeyFile == ""):
		return loadUsagef("--cert and --key go together")
	case f.kv.Options.Pipeline != 1 && (f.o.Rate > 0 || f.o.Open):
		return loadUsagef("-P %d: pipelining runs closed loop; drop -r/--open", f.kv.Options.Pipeline)
	}
	if err := f.checkLimits(); err != nil {
		return err
	}
	if err := f.checkArrivals(fs); err != nil {
		return err
	}
	grpcMethod := fs.Changed("grpc") && isMethod(f.stream.GRPC)
	for _, name := range flags.KVNames {
		if fs.Changed(name) && !strings.HasPrefix(f.scenario, "kv-") && !(name == "protocol" && grpcMethod) {
			return loadUsagef("--%s applies to the kv-* scenarios", name)
		}
	}
	if (fs.Changed("data-key") || fs.Changed("message")) && f.scenario != scenario.Records {
		return loadUsagef("--data-key and --message apply to --scenario records")
	}
	for _, name := range []string{"proto", "import-path", "protoset", "data", "expect", "tls"} {
		replayable := f.replay.file != "" && name != "data" && name != "expect" // a recording of gRPC calls' (replay.go)
		records := f.scenario == scenario.Records && (name == "data" || name == "proto" || name == "protoset")
		if fs.Changed(name) && !grpcMethod && !replayable && !records {
			return loadUsagef("--%s applies to --grpc pkg.Service/Method", name)
		}
	}
	if f.stages != "" && !f.o.Open && !fs.Changed("concurrency") {
		f.o.Concurrency = 0 // closed-loop --stages size the pool from their largest target
	}
	return nil
}

// scenarioFrom makes the client from the flags (package spec): raw mode
// with a URL, or a scenario. f.o becomes the options it runs with (a
// replay's recording as the schedule).
func (f *loadFlags) scenarioFrom(pos []string) (*spec.Made, error) {
	if len(pos) != 1 {
		return nil, loadUsagef("want exactly one URL argument, got %d", len(pos))
	}
	url := pos[0]
	if f.o.Timeout <= 0 {
		return nil, loadUsagef("-t must be > 0")
	}
	f.raw.URL, f.raw.Timeout, f.raw.Header = url, f.o.Timeout, f.hdrs
	for _, e := range f.expect {
		for _, s := range strings.Split(e, ",") {
			n, err := strconv.Atoi(strings.TrimSpace(s))
			if err != nil {
				return nil, loadUsagef("--expect-status %q: not a number", s)
			}
			f.raw.ExpectStatus = append(f.raw.ExpectStatus, n)
		}
	}
	if f.raw.ZeroRTT && (f.replay.file != "" || f.stream.Kind != "" || f.browser.Kind != "" || strings.HasPrefix(f.scenario, "kv-")) {
		return nil, loadUsagef("--0rtt applies to raw mode and the reference scenarios over --transport h3")
	}
	c := spec.Client{Options: f.o}
	cliErr := optionsError // how the client's errors read
	var err error
	switch {
	case f.fs != nil && f.fs.Changed("grpc") && isMethod(f.stream.GRPC):
		cliErr, err = f.grpcClient(&c, f.fs, url) // load_grpc.go
	case f.replay.file != "":
		cliErr, err = f.replayClient(&c, url) // replay.go
	case f.flow.file != "":
		cliErr, err = f.flowClient(&c, url) // load_flow.go
	case f.stream.Kind != "" || f.browser.Kind != "":
		err = f.streamClient(&c, url) // loadstream.go
	case strings.HasPrefix(f.scenario, "kv-"):
		err = f.kvClient(&c, url) // load_kv.go
	case f.scenario != "":
		err = f.recordsData() // --scenario records: load_records.go
		f.sc.Name, f.sc.Options = f.scenario, f.raw.Options
		c.Scenario = &f.sc
	default:
		err = f.rawClient(&c)
	}
	if err != nil {
		return nil, err
	}
	m, err := spec.New(f.ctx, c)
	if err != nil {
		return nil, cliErr(err)
	}
	f.o = m.Options
	return m, nil
}

// optionsError is a client's options error as a usage error, without the
// library's prefixes.
func optionsError(err error) error { return loadUsagef("%s", cliMessage(err)) }

// rawClient is raw mode's: -b's body, from a file with @.
func (f *loadFlags) rawClient(c *spec.Client) error {
	if strings.HasPrefix(f.body, "@") {
		b, err := os.ReadFile(f.body[1:])
		if err != nil {
			return loadUsagef("-b: %v", err)
		}
		f.raw.Body = b
	} else if f.body != "" {
		f.raw.Body = []byte(f.body)
	}
	c.Raw = &f.raw
	if r := f.replay.record; r != "" {
		c.Record = &spec.Record{Path: r, Keep: f.replay.keep, Create: func() (io.WriteCloser, error) { return createRecord(r, f.outs.force) }}
	}
	return nil
}

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

// checkArrivals reads --arrivals into the options; it applies to an open
// loop at a rate or along stages.
func (f *loadFlags) checkArrivals(fs *pflag.FlagSet) error {
	a, err := results.ParseArrivals(f.arrivals)
	if err != nil {
		return loadUsagef("--%v", err)
	}
	if (fs.Changed("arrivals") || fs.Changed("arrivals-seed")) && !f.o.Open && f.o.Rate == 0 && fs.Lookup("slo") == nil {
		return loadUsagef("--arrivals applies to an open loop (-r, or --stages with --open)")
	}
	if fs.Changed("arrivals-seed") && a != results.Poisson {
		return loadUsagef("--arrivals-seed applies to --arrivals poisson")
	}
	f.o.Arrivals = a
	return nil
}
