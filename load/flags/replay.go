package flags

import (
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/spf13/pflag"

	"github.com/wirebench/wirebench/load/replay"
	"github.com/wirebench/wirebench/load/replay/reqlog"
	"github.com/wirebench/wirebench/load/spec"
)

// Replay are load's --replay flags and --record (docs/replay.md), or
// wirebench replay's own names for them (RegisterReplay).
type Replay struct {
	File, Format, fields, host, Record string
	Keep                               reqlog.Options // --record-secrets, --record-bodies
	asFormat                           string         // replay's --as-format
	speed                              float64
	maxGap                             time.Duration
	Loop, dryRun, AllowPartial         bool
	drop                               []string
	// The flags' names in messages: load's (--replay-fields) or
	// replay's (--fields); fileFlag prefixes the recording's errors.
	fileFlag, fieldsFlag string
}

// Register adds load's --replay flags and --record.
func (r *Replay) Register(fs *pflag.FlagSet) {
	r.fileFlag, r.fieldsFlag = "--replay: ", "--replay-fields"
	fs.StringVar(&r.File, "replay", "", "replay the requests recorded in this `file` (HAR, access log, JSON lines, or a --record log) at their recorded times, open loop, to the URL's host (docs/replay.md)")
	fs.StringVar(&r.Format, "replay-format", "", "--replay file `format`: har, combined (access log), jsonl or wirebench (default: guessed)")
	fs.StringVar(&r.fields, "replay-fields", "", "--replay JSON lines: `map` of fields, e.g. ts=time,method=verb,path=uri,status=code (also headers=, body=; dotted names reach into objects)")
	fs.Float64Var(&r.speed, "speed", 1, "--replay: `factor` on the recorded rate (2: twice as fast)")
	fs.BoolVar(&r.Loop, "loop", false, "--replay: repeat the recording until -d")
	r.registerShare(fs)
	fs.StringVar(&r.host, "rewrite-host", "", "--replay: Host header to send (default the URL's host; 'recorded': each request's own)")
	fs.StringArrayVar(&r.drop, "drop-header", nil, "--replay: do not send this recorded `header` (repeatable; e.g. Cookie, Authorization)")
	fs.BoolVar(&r.dryRun, "replay-dry-run", false, "--replay: schedule and prepare every request but send none (the schedule's own timing and memory)")
	fs.StringVar(&r.Record, "record", "", "write every request sent to this `file` as wirebench's request log, to --replay later (raw mode and --replay; 0600, never over a file without --force; secrets redacted, KV and large bodies kept out: --record-secrets, --record-bodies)")
	r.registerKeep(fs)
}

// RegisterReplay adds wirebench replay's flags: the recording's, by
// their own names (--format is the recording's, not a scenario's), and
// how to connect and how much to send. The recording is the command's
// argument (Replay.File).
func (f *Load) RegisterReplay(fs *pflag.FlagSet) {
	f.Register(pflag.NewFlagSet("load", pflag.ContinueOnError)) // load's defaults for what replay does not ask
	f.fs = fs
	r := &f.Replay
	r.fileFlag, r.fieldsFlag = "", "--fields"
	fs.Float64Var(&r.speed, "speed", 1, "`factor` on the recorded rate (2: twice as fast, 0.5: half)")
	fs.StringVar(&r.Format, "format", "", "recording `format`: har, combined (access log), jsonl, wirebench or grpc (gRPC calls, sent to a host:port --target: docs/grpc.md) (default: guessed from the name and first line)")
	fs.StringVar(&r.fields, "fields", "", "JSON lines: `map` of fields, e.g. ts=time,method=verb,path=uri,status=code (also headers=, body=)")
	fs.BoolVar(&r.Loop, "loop", false, "repeat the recording until -d")
	r.registerShare(fs)
	fs.StringVar(&r.host, "rewrite-host", "", "Host header to send (default the target's host; 'recorded': each request's own)")
	fs.StringArrayVar(&r.drop, "drop-header", nil, "do not send this recorded `header` (repeatable; e.g. Cookie, Authorization)")
	fs.BoolVar(&r.dryRun, "dry-run", false, "schedule and prepare every request but send none (the schedule's own timing)")
	fs.StringVar(&r.Record, "record", "", "write every request sent to this `file` as wirebench's request log (0600; secrets redacted, KV and large bodies kept out: --record-secrets, --record-bodies)")
	r.registerKeep(fs)
	fs.StringVar(&r.asFormat, "as-format", "", "reference API: re-encode the recorded JSON bodies into this `format` ("+strings.Join(replay.AsFormats, ", ")+") and ask for replies in it")
	fs.StringVar(&f.Raw.Transport, "transport", "", "`transport`: http1 (default; over TLS for https://), h2c (http://), h2 or h3 (https://)")
	f.GRPC.RegisterDescriptors(fs) // a recording of gRPC calls: --proto, --protoset, --tls
	fs.IntVar(&f.Raw.Connections, "conns", 1, "h2c, h2, h3: `connections` shared by the requests in flight")
	fs.BoolVarP(&f.Raw.Insecure, "insecure", "k", false, "https: do not verify the server's certificate")
	fs.StringVar(&f.Raw.CAFile, "cacert", "", "https: verify the server against the CA certificates in this PEM `file` (serve --cert-out writes one)")
	fs.IntVarP(&f.Options.Concurrency, "concurrency", "c", 10, "cap on requests in flight; a request past it waits, and the wait counts in its latency (with --slo: 256, each step using what its rate needs)")
	fs.VarP(Duration{D: &f.Options.Duration}, "duration", "d", "stop after this `long` (default: when the recording ends; with --loop, required)")
	f.Options.Timeout = 10 * time.Second
	fs.VarP(Duration{D: &f.Options.Timeout}, "timeout", "t", "per-request `timeout`")
	f.Options.GracefulStop = 2 * time.Second
	fs.Var(Duration{D: &f.Options.GracefulStop}, "graceful-stop", "let requests in flight at the end of -d finish for this `long`")
	fs.StringVar(&f.CPUs, "cpu", "", "pin the client to these `CPUs` (e.g. 0 or 0-1,3) and record it")
	f.Engine = "goroutine" // a replay's VUs are goroutines; the event loops are raw mode's
}

// registerShare adds the bounds on what a replay may leave out.
func (r *Replay) registerShare(fs *pflag.FlagSet) {
	r.maxGap = replay.DefaultMaxGap
	fs.Var(Duration{D: &r.maxGap}, "max-gap", "--replay: cut a recorded pause longer than this `long` to it, counted (0: keep every pause)")
	fs.BoolVar(&r.AllowPartial, "allow-partial", false, fmt.Sprintf("--replay: exit 0 even when the run sent less than %.0f%% of the recording (lines skipped, entries too large, a run cut short)", replay.MinShare*100))
}

// registerKeep adds what a --record log keeps beyond its safe default.
func (r *Replay) registerKeep(fs *pflag.FlagSet) {
	fs.BoolVar(&r.Keep.Secrets, "record-secrets", false, "--record: keep the values of Authorization, Cookie, tokens and other secret headers and query parameters (default: REDACTED; docs/replay.md lists them)")
	fs.BoolVar(&r.Keep.Bodies, "record-bodies", false, "--record: keep the bodies of /kv/ requests and those over 64 KiB (default: kept out, their length noted)")
}

// CreateRecord opens a --record log: refused, as every output of
// wirebench's, when the file exists and force is not given, and created
// exclusively, 0600, never through a symlink (reqlog.Create, which tells
// a link, dangling or not, from an existing file).
func CreateRecord(path string, force bool) (*os.File, error) {
	return reqlog.Create(path, force)
}

// replayOnly are the flags that mean nothing without --replay.
var replayOnly = []string{"max-gap", "allow-partial", "replay-format", "replay-fields", "speed", "loop", "rewrite-host", "drop-header", "replay-dry-run"}

// replayClient is --replay's client: the recording, sent to url's host
// at its recorded times (package spec makes them the run's schedule).
func (f *Load) replayClient(c *spec.Client, url string) (func(error) error, error) {
	r := &f.Replay
	o, err := f.ReplayOptions(f.fs, url)
	if err != nil {
		return nil, err
	}
	if r.Record != "" {
		if o.Record, err = CreateRecord(r.Record, f.Force); err != nil {
			return nil, Usagef("--record: %v", err)
		}
		o.RecordKeep = r.Keep
	}
	if spec.IsGRPCReplay(&o) {
		return f.grpcReplayClient(c, o)
	}
	if g := f.GRPC; len(g.Options.Protos) > 0 || g.Options.Protoset != "" || len(g.Options.ImportPaths) > 0 || g.TLS {
		if o.Record != nil {
			o.Record.Close()
		}
		return nil, Usagef("--proto, --import-path, --protoset and --tls are for a recording of gRPC calls; %s is not one (docs/grpc.md)", r.File)
	}
	c.Replay = &o
	return func(err error) error {
		return Usagef("%s%s", r.fileFlag, strings.TrimPrefix(err.Error(), "replay: "))
	}, nil
}

// ReplayOptions checks the flags a replay cannot take (fs: those given)
// and makes its options to url (no Record).
func (f *Load) ReplayOptions(fs *pflag.FlagSet, url string) (replay.Options, error) {
	r := &f.Replay
	for _, c := range []struct {
		bad  bool
		what string
	}{
		{f.Options.Rate > 0 || f.Options.Open || f.Stages != "", "-r, --open and --stages: the recording is the schedule (use --speed)"},
		{f.Scenario != "" || f.Stream.Kind != "" || f.Browser.Kind != "", "--scenario, --stream and --browser"},
		{fs.Changed("method") || fs.Changed("body") || len(f.Headers) > 0, "-m, -b and -H: requests are as recorded (--drop-header drops)"},
		{f.Options.Requests > 0, "-n: the recording sets the count (-d bounds the time)"},
		{f.Raw.CertFile != "", "--cert and --key (a client certificate) yet"},
	} {
		if c.bad {
			return replay.Options{}, Usagef("--replay does not take %s", c.what)
		}
	}
	if fs.Changed("speed") && !(r.speed > 0) {
		return replay.Options{}, Usagef("--speed %g: want > 0 (2: twice as fast, 0.5: half)", r.speed)
	}
	fields, err := replay.ParseFieldMap(r.fields)
	if err != nil {
		return replay.Options{}, Usagef("%s: %s", r.fieldsFlag, strings.TrimPrefix(err.Error(), "replay: "))
	}
	co := f.Raw.Options // the connection flags, as load's
	co.URL, co.Timeout = url, f.Options.Timeout
	gap := r.maxGap // replay.Options' 0 is the default
	if gap <= 0 {
		gap = -1
	}
	return replay.Options{File: r.File, Format: r.Format, Fields: fields, Speed: r.speed, Loop: r.Loop, Options: co,
		MaxGap: gap, Host: r.host, DropHeaders: r.drop, DryRun: r.dryRun, AsFormat: r.asFormat}, nil
}

// checkReplay refuses replay flags without --replay, and --record where
// it does not apply.
func (f *Load) checkReplay() error {
	r, fs := &f.Replay, f.fs
	if r.File != "" {
		return nil
	}
	for _, n := range replayOnly {
		if fs.Changed(n) {
			return Usagef("--%s applies to --replay", n)
		}
	}
	if r.Record == "" {
		for _, n := range []string{"record-secrets", "record-bodies"} {
			if fs.Changed(n) {
				return Usagef("--%s applies to --record", n)
			}
		}
	}
	if r.Record != "" && (f.Scenario != "" || f.Stream.Kind != "" || f.Browser.Kind != "") {
		return Usagef("--record records raw mode and --replay; to record a scenario's requests, run the server with serve --record")
	}
	return nil
}

// RecordLine says what a --record log holds and what it kept out.
func RecordLine(path string, st reqlog.WriterStats) string {
	s := fmt.Sprintf("%d requests written to %s", st.Requests, path)
	if st.Redacted > 0 {
		s += fmt.Sprintf("; %d secret values REDACTED (--record-secrets keeps them)", st.Redacted)
	}
	if st.BodiesOut > 0 {
		s += fmt.Sprintf("; %d bodies kept out (KV or over 64 KiB; --record-bodies keeps them)", st.BodiesOut)
	}
	return s
}
