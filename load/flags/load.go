package flags

import (
	"context"
	"io"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/pflag"

	"github.com/wirebench/wirebench/load"
	"github.com/wirebench/wirebench/load/browser"
	"github.com/wirebench/wirebench/load/conn"
	"github.com/wirebench/wirebench/load/scenario"
	"github.com/wirebench/wirebench/load/spec"
	"github.com/wirebench/wirebench/load/stream"
	"github.com/wirebench/wirebench/results"
)

// Load are the flags that say what a load run sends and how much: the
// engine's options and one client's (raw mode, a reference-API scenario,
// kv-*, a stream, the browser, a flow, a replay or a gRPC method), as
// wirebench load, replay and capacity take them. Register them, parse,
// Check, then Made makes the client (package spec).
type Load struct {
	Options  load.Options
	Raw      load.RawOptions
	Ref      scenario.Options // --scenario's (the reference API)
	KV       KV
	Stream   stream.Options
	Browser  browser.Options
	GRPC     GRPC
	Replay   Replay
	Flow     Flow
	Records  Records
	Dist     Dist
	Scenario string // --scenario
	// Body is -b (@file reads it); Stages --stages; Segment --segment.
	Body, Stages, Segment string
	Engine, Arrivals      string
	Expect, Headers       []string
	// CPUs is --cpu: the client's CPUs (measure.PinList).
	CPUs string
	// Force lets a --record log replace a file (the command's --force).
	Force bool
	// ctx and fs are the command's, for the scenarios that connect while
	// they are made (--grpc's reflection) or read which flags were given.
	ctx context.Context
	fs  *pflag.FlagSet
}

// Register adds load's flags for what to send to fs, with their defaults.
func (f *Load) Register(fs *pflag.FlagSet) {
	f.fs = fs
	fs.IntVarP(&f.Options.Concurrency, "concurrency", "c", 10, "`VUs` (closed loop; one HTTP/1.1 connection each) or the cap on requests in flight (open loop)")
	fs.Int64VarP(&f.Options.Requests, "requests", "n", 0, "send exactly `N` requests")
	fs.VarP(Duration{D: &f.Options.Duration}, "duration", "d", "run for this `long` (default 10s unless -n or --stages)")
	fs.Float64VarP(&f.Options.Rate, "rate", "r", 0, "open loop at `R` requests/s; latency counts from the intended send time")
	f.Options.Timeout = 10 * time.Second
	fs.VarP(Duration{D: &f.Options.Timeout}, "timeout", "t", "per-request `timeout`")
	fs.StringVarP(&f.Raw.Method, "method", "m", "GET", "HTTP `method` (raw mode)")
	fs.StringArrayVarP(&f.Headers, "header", "H", nil, "request header `'K: V'` (repeatable; a User-Agent or Host replaces ours, an empty User-Agent sends none)")
	fs.StringVarP(&f.Body, "body", "b", "", "request `body`, or @file to read it from a file")
	fs.StringVar(&f.Stages, "stages", "", "ramp `d:target,...` as k6 (VUs; rate with --open), e.g. 30s:50,1m:50,30s:100")
	fs.BoolVar(&f.Options.Open, "open", false, "open loop: --stages ramp the arrival rate")
	fs.StringVar(&f.Arrivals, "arrivals", string(results.Uniform), "open loop's arrival `process`: uniform (evenly spaced) or poisson (exponential gaps, seeded: bursts as independent users make them)")
	fs.Uint64Var(&f.Options.Seed, "arrivals-seed", 0, "`seed` of --arrivals poisson (0: 1); the same seed sends the same schedule")
	f.Options.GracefulStop = 2 * time.Second
	fs.Var(Duration{D: &f.Options.GracefulStop}, "graceful-stop", "let requests in flight at the end of -d finish for this `long`")
	fs.StringSliceVar(&f.Expect, "expect-status", nil, "accepted `status` (repeatable or comma-separated; default any 2xx)")
	fs.StringVar(&f.Raw.ExpectBodyContains, "expect-body-contains", "", "fail responses whose body lacks this `text`")
	fs.BoolVar(&f.Raw.NoKeepAlive, "no-keepalive", false, "close and redial the connection after every request (HTTP/1.1; https then skips the ALPN probe)")
	fs.StringVar(&f.Raw.Client, "client", conn.ClientLean, "`client`: lean (ours) or std (net/http on HTTP/1.1, grpc-go on gRPC; https then skips the ALPN probe); HTTP/2 runs on x/net's")
	fs.StringVar(&f.Engine, "engine", "loop", "raw lean HTTP/1.1 in closed loop runs on wrk-style event `loops` (loop) or one goroutine per VU (goroutine)")
	fs.StringVar(&f.Raw.Transport, "transport", "", "`transport`: http1, h2 (HTTP/2 over TLS), h2c, h3 (HTTP/3 over QUIC, https://), auto (https://: h3 if the first request's Alt-Svc offers it, else h2 or http1), grpc (grpc with --scenario only); default http1, or h2 when https:// and the server offers it")
	fs.IntVar(&f.Raw.Connections, "conns", 1, "h2c/h2/h3/gRPC: `connections` shared by the VUs (streams per connection = VUs/conns)")
	fs.BoolVarP(&f.Raw.Insecure, "insecure", "k", false, "https: do not verify the server's certificate")
	fs.StringVar(&f.Raw.CAFile, "cacert", "", "https: verify the server against the CA certificates in this PEM `file`")
	fs.BoolVar(&f.Raw.NoLayers, "no-layers", false, "h3: leave the bytes split by layer inside QUIC out of the result (quic-go then builds no trace events: the client costs what a bare quic-go loop does)")
	fs.BoolVar(&f.Raw.CheckLayers, "layers-checked", false, "h3: count the split by layer from quic-go's packet events too and warn unless the layers add up exactly (quic-go then builds an event per packet: more client CPU)")
	fs.BoolVar(&f.Raw.ZeroRTT, "0rtt", false, "h3 (raw mode, --scenario): resume a session ticket and send each connection's first GET/HEAD as 0-RTT early data (the server must allow it: serve --h3-0rtt)")
	fs.StringVar(&f.Raw.CertFile, "cert", "", "https: client certificate (PEM `file`), with --key")
	fs.StringVar(&f.Raw.KeyFile, "key", "", "https: client certificate's private key (PEM `file`)")
	fs.StringVar(&f.Scenario, "scenario", "", "reference-API `scenario`: crud, echo, get, list, create, records (serve --data: with --data FILE); or a key-value one: kv-set, kv-get, kv-mixed")
	f.KV.Register(fs)
	fs.StringVar(&f.Ref.Format, "format", "json", "scenario wire `format`: json, toon, protobuf, msgpack, cbor (--flow: re-encodes its JSON steps for the reference API)")
	fs.StringVar(&f.Stream.Kind, "stream", "", "stream `kind` against the reference server's REST port URL (see stream.Kinds): grpc-server-stream, grpc-bidi, ndjson, sse, websocket, connect-get, tunnel-get, ...")
	fs.StringVar(&f.Stream.GRPC, "grpc", "127.0.0.1:9090", "`pkg.Service/Method` to call on the host:port URL (any gRPC server: --proto, --protoset or its reflection; --data); with --stream, the gRPC address (host:port) of the native gRPC kinds")
	fs.IntVar(&f.Stream.Messages, "messages", 100, "--stream: `messages` per bidi, client-stream or WebSocket exchange")
	fs.StringVar(&f.Browser.Kind, "browser", "", "run the in-browser page's `kind` in headless chromium against the REST port URL: fetch-json, connect, grpc-web, ws-tunnel, connect-stream, ws-tunnel-stream (-c 1)")
	fs.IntVar(&f.Browser.Batch, "batch", 50, "--browser: calls per operation (the page times each)")
	fs.StringVar(&f.Ref.Compression, "compression", "", "scenario: ask for gzip-coded responses (`gzip`) and decode them before the checks")
	fs.StringVar(&f.CPUs, "cpu", "", "pin the client to these `CPUs` (e.g. 0 or 0-1,3) and record it")
	fs.StringVar(&f.Segment, "segment", "", "run share `i/n` of the load, or auto/n: i = $JOB_COMPLETION_INDEX+1 (see wirebench merge)")
	f.Dist.Register(fs)
	f.Replay.Register(fs)
	f.Flow.Register(fs)
	f.GRPC.Register(fs)
	f.Records.Register(fs)
}

// Check refuses flags that contradict each other or are out of range,
// with one line each (a UsageError), and reads the text flags that need
// no client yet (--stages, --arrivals). Dist.Apply reads --segment and
// the start flags.
func (f *Load) Check(fs *pflag.FlagSet) error {
	f.fs = fs
	switch {
	case f.Stages != "" && fs.Changed("duration"):
		return Usagef("--stages sets the run's length: drop -d")
	case f.Stages != "" && fs.Changed("rate"):
		return Usagef("--stages with -r: for a ramping rate use --stages with --open (targets are req/s)")
	case f.Engine != "loop" && f.Engine != "goroutine":
		return Usagef("--engine: want loop or goroutine, got %q", f.Engine)
	case f.Options.Open && f.Options.Rate == 0 && f.Stages == "":
		return Usagef("--open needs -r or --stages")
	case (f.Raw.CertFile == "") != (f.Raw.KeyFile == ""):
		return Usagef("--cert and --key go together")
	case f.KV.Options.Pipeline != 1 && (f.Options.Rate > 0 || f.Options.Open):
		return Usagef("-P %d: pipelining runs closed loop; drop -r/--open", f.KV.Options.Pipeline)
	}
	if err := f.CheckLimits(); err != nil {
		return err
	}
	if err := f.CheckArrivals(fs); err != nil {
		return err
	}
	grpcMethod := fs.Changed("grpc") && IsMethod(f.Stream.GRPC)
	for _, name := range KVNames {
		if fs.Changed(name) && !strings.HasPrefix(f.Scenario, "kv-") && !(name == "protocol" && grpcMethod) {
			return Usagef("--%s applies to the kv-* scenarios", name)
		}
	}
	if err := f.checkRecords(fs); err != nil {
		return err
	}
	for _, name := range []string{"proto", "import-path", "protoset", "data", "expect", "tls"} {
		replayable := f.Replay.File != "" && name != "data" && name != "expect" // a recording of gRPC calls'
		records := f.Scenario == scenario.Records && (name == "data" || name == "proto" || name == "protoset")
		if fs.Changed(name) && !grpcMethod && !replayable && !records {
			return Usagef("--%s applies to --grpc pkg.Service/Method", name)
		}
	}
	if f.Stages != "" && !f.Options.Open && !fs.Changed("concurrency") {
		f.Options.Concurrency = 0 // closed-loop --stages size the pool from their largest target
	}
	if err := f.checkReplay(); err != nil {
		return err
	}
	if err := f.Flow.Check(fs); err != nil {
		return err
	}
	if f.Stages != "" {
		var err error
		if f.Options.Stages, err = load.ParseStages(f.Stages); err != nil {
			return Usagef("--stages: %s", Message(err))
		}
		if err := CheckStages(f.Options.Stages, f.Options.Open); err != nil {
			return err
		}
	}
	f.Options.EventLoop = f.Engine == "loop"
	return nil
}

// CheckArrivals reads --arrivals into the options; it applies to an open
// loop at a rate or along stages (or to a command with --slo: capacity's
// steps are open loop).
func (f *Load) CheckArrivals(fs *pflag.FlagSet) error {
	a, err := results.ParseArrivals(f.Arrivals)
	if err != nil {
		return Usagef("--%v", err)
	}
	if (fs.Changed("arrivals") || fs.Changed("arrivals-seed")) && !f.Options.Open && f.Options.Rate == 0 && fs.Lookup("slo") == nil {
		return Usagef("--arrivals applies to an open loop (-r, or --stages with --open)")
	}
	if fs.Changed("arrivals-seed") && a != results.Poisson {
		return Usagef("--arrivals-seed applies to --arrivals poisson")
	}
	f.Options.Arrivals = a
	return nil
}

// Made makes the client from the flags (package spec): raw mode with a
// URL, or a scenario; pos are the command's arguments, the URL alone.
// f.Options become the options it runs with (a replay's recording as the
// schedule). fs is the flag set parsed (which flags were given); ctx
// bounds what a scenario does while it is made.
func (f *Load) Made(ctx context.Context, fs *pflag.FlagSet, pos []string) (*spec.Made, error) {
	f.ctx, f.fs = ctx, fs
	if len(pos) != 1 {
		return nil, Usagef("want exactly one URL argument, got %d", len(pos))
	}
	url := pos[0]
	if f.Options.Timeout <= 0 {
		return nil, Usagef("-t must be > 0")
	}
	f.Raw.URL, f.Raw.Timeout, f.Raw.Header = url, f.Options.Timeout, f.Headers
	for _, e := range f.Expect {
		for _, s := range strings.Split(e, ",") {
			n, err := strconv.Atoi(strings.TrimSpace(s))
			if err != nil {
				return nil, Usagef("--expect-status %q: not a number", s)
			}
			f.Raw.ExpectStatus = append(f.Raw.ExpectStatus, n)
		}
	}
	if f.Raw.ZeroRTT && (f.Replay.File != "" || f.Stream.Kind != "" || f.Browser.Kind != "" || strings.HasPrefix(f.Scenario, "kv-")) {
		return nil, Usagef("--0rtt applies to raw mode and the reference scenarios over --transport h3")
	}
	if err := f.checkRecords(fs); err != nil {
		return nil, err
	}
	c := spec.Client{Options: f.Options}
	cliErr := optionsError // how the client's errors read
	var err error
	switch {
	case f.fs != nil && f.fs.Changed("grpc") && IsMethod(f.Stream.GRPC):
		cliErr, err = f.grpcClient(&c, url)
	case f.Replay.File != "":
		cliErr, err = f.replayClient(&c, url)
	case f.Flow.File != "":
		cliErr, err = f.flowClient(&c, url)
	case f.Stream.Kind != "" || f.Browser.Kind != "":
		err = f.streamClient(&c, url)
	case strings.HasPrefix(f.Scenario, "kv-"):
		err = f.kvClient(&c, url)
	case f.Scenario != "":
		err = f.recordsData()
		f.Ref.Name, f.Ref.Options = f.Scenario, f.Raw.Options
		c.Scenario = &f.Ref
	default:
		err = f.rawClient(&c)
	}
	if err != nil {
		return nil, err
	}
	m, err := spec.New(ctx, c)
	if err != nil {
		return nil, cliErr(err)
	}
	f.Options = m.Options
	return m, nil
}

// optionsError is a client's options error as a usage error, without the
// library's prefixes.
func optionsError(err error) error { return Usagef("%s", Message(err)) }

// rawClient is raw mode's: -b's body, from a file with @.
func (f *Load) rawClient(c *spec.Client) error {
	if strings.HasPrefix(f.Body, "@") {
		b, err := os.ReadFile(f.Body[1:])
		if err != nil {
			return Usagef("-b: %v", err)
		}
		f.Raw.Body = b
	} else if f.Body != "" {
		f.Raw.Body = []byte(f.Body)
	}
	c.Raw = &f.Raw
	if r := f.Replay.Record; r != "" {
		c.Record = &spec.Record{Path: r, Keep: f.Replay.Keep, Create: func() (io.WriteCloser, error) { return CreateRecord(r, f.Force) }}
	}
	return nil
}
