package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/spf13/pflag"

	"github.com/wirebench/wirebench/load/flags"
	"github.com/wirebench/wirebench/load/replay"
	"github.com/wirebench/wirebench/load/replay/reqlog"
	"github.com/wirebench/wirebench/load/spec"
	"github.com/wirebench/wirebench/report"
	"github.com/wirebench/wirebench/results"
)

func init() {
	register("replay", command{
		summary: "send recorded traffic (HAR, access log, JSON lines, serve --record) at its recorded times × --speed, per endpoint",
		run:     runReplay,
	})
}

const replayUsage = `[flags] FILE --target URL

Sends the requests recorded in FILE to URL's host at their recorded times
× 1/--speed, open loop: latency counts from each request's scheduled time.
FILE is a HAR 1.2 export, an nginx/Apache combined access log, a JSON-lines
log (--fields), or wirebench's request log (serve --record, load --record).
Results are per endpoint (ids folded: GET /users/{id}); each response must
be in its recorded status class. The same as 'wirebench load --replay FILE URL'.
With --slo, searches the highest --speed whose replay meets the SLO
(capacity's search in speed: "the recording fits 2.7× its own rate").
Exit status: 0 ok, 1 run failed, 2 bad usage, 99 a --threshold failed.
See docs/replay.md.`

// runReplay is load --replay with the recording as the argument and its
// own flag names (--format is the recording's, not a scenario's).
func runReplay(ctx context.Context, env *cliEnv, args []string) error {
	var f loadFlags
	newLoadFlags(env, &f) // load's defaults for what replay does not ask
	var target string
	r := &f.replay
	fs := newFlagSet(env, "replay", replayUsage)
	r.fs, r.fileFlag, r.fieldsFlag = fs, "", "--fields"
	fs.StringVar(&target, "target", "", "send to this `URL` (http://host:port or https://; the recorded hosts are never contacted)")
	fs.Float64Var(&r.speed, "speed", 1, "`factor` on the recorded rate (2: twice as fast, 0.5: half)")
	fs.StringVar(&r.format, "format", "", "recording `format`: har, combined (access log), jsonl, wirebench or grpc (gRPC calls, sent to a host:port --target: docs/grpc.md) (default: guessed from the name and first line)")
	fs.StringVar(&r.fields, "fields", "", "JSON lines: `map` of fields, e.g. ts=time,method=verb,path=uri,status=code (also headers=, body=)")
	fs.BoolVar(&r.loop, "loop", false, "repeat the recording until -d")
	r.registerShare(fs)
	fs.StringVar(&r.host, "rewrite-host", "", "Host header to send (default the target's host; 'recorded': each request's own)")
	fs.StringArrayVar(&r.drop, "drop-header", nil, "do not send this recorded `header` (repeatable; e.g. Cookie, Authorization)")
	fs.BoolVar(&r.dryRun, "dry-run", false, "schedule and prepare every request but send none (the schedule's own timing)")
	fs.StringVar(&r.record, "record", "", "write every request sent to this `file` as wirebench's request log (0600; secrets redacted, KV and large bodies kept out: --record-secrets, --record-bodies)")
	r.registerKeep(fs)
	fs.StringVar(&r.asFormat, "as-format", "", "reference API: re-encode the recorded JSON bodies into this `format` ("+strings.Join(replay.AsFormats, ", ")+") and ask for replies in it")
	fs.StringVar(&f.raw.Transport, "transport", "", "`transport`: http1 (default; over TLS for https://), h2c (http://), h2 or h3 (https://)")
	f.grpc.registerDescriptors(fs) // a recording of gRPC calls: --proto, --protoset, --tls (load_grpc.go)
	fs.IntVar(&f.raw.Connections, "conns", 1, "h2c, h2, h3: `connections` shared by the requests in flight")
	fs.BoolVarP(&f.raw.Insecure, "insecure", "k", false, "https: do not verify the server's certificate")
	fs.StringVar(&f.raw.CAFile, "cacert", "", "https: verify the server against the CA certificates in this PEM `file` (serve --cert-out writes one)")
	fs.IntVarP(&f.o.Concurrency, "concurrency", "c", 10, "cap on requests in flight; a request past it waits, and the wait counts in its latency (with --slo: 256, each step using what its rate needs)")
	fs.VarP(flags.Duration{D: &f.o.Duration}, "duration", "d", "stop after this `long` (default: when the recording ends; with --loop, required)")
	f.o.Timeout = 10 * time.Second
	fs.VarP(flags.Duration{D: &f.o.Timeout}, "timeout", "t", "per-request `timeout`")
	f.o.GracefulStop = 2 * time.Second
	fs.Var(flags.Duration{D: &f.o.GracefulStop}, "graceful-stop", "let requests in flight at the end of -d finish for this `long`")
	fs.StringVar(&f.out, "out", "", "write the result (schema wirebench.load/v2, one operation per endpoint) to this `file`; - for stdout")
	f.outs.register(fs) // --hdr-out, --force
	fs.StringArrayVar(&f.thresholds, "threshold", nil, "pass/fail `criterion` (repeatable): p99<50ms, errors<1%")
	fs.BoolVar(&f.latency, "latency", false, "print the latency distribution (50, 75, 90, 99%)")
	fs.StringVar(&f.percentiles, "percentiles", "", "print the latency at these `percentiles`, e.g. 50,90,99,99.9")
	fs.StringVar(&f.cpus, "cpu", "", "pin the client to these `CPUs` (e.g. 0 or 0-1,3) and record it")
	fs.BoolVarP(&f.quiet, "quiet", "q", false, "no live status line")
	f.link.register(fs) // --link…: link.go
	var search replaySearch
	search.register(fs) // --slo…: replay_capacity.go
	fs.Lookup("duration").DefValue = ""
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if err := search.check(fs); err != nil {
		return err
	}
	switch pos := fs.Args(); {
	case len(pos) != 1:
		return usagef("want exactly one recording FILE, got %d arguments", len(pos))
	case target == "":
		return usagef("--target URL is required (where to send the recording)")
	default:
		r.file = pos[0]
	}
	if r.loop && f.o.Duration == 0 {
		return usagef("--loop repeats until -d: give -d")
	}
	f.engine = "goroutine" // a replay's VUs are goroutines; the event loops are raw mode's
	if done, err := f.link.across(ctx, env, "replay", args); done {
		return err
	}
	if len(search.slo) > 0 {
		return runReplaySearch(ctx, env, &f, &search, fs, target, args)
	}
	return f.run(ctx, env, fs, args, []string{target})
}

// replayFlags are load's --replay flags and --record (docs/replay.md).
type replayFlags struct {
	file, format, fields, host, record string
	keep                               reqlog.Options // --record-secrets, --record-bodies
	asFormat                           string         // replay's --as-format
	speed                              float64
	maxGap                             time.Duration
	loop, dryRun, allowPartial         bool
	drop                               []string
	fs                                 *pflag.FlagSet
	// The flags' names in messages: load's (--replay-fields) or
	// replay's (--fields); fileFlag prefixes the recording's errors.
	fileFlag, fieldsFlag string
}

func (r *replayFlags) register(fs *pflag.FlagSet) {
	r.fs, r.fileFlag, r.fieldsFlag = fs, "--replay: ", "--replay-fields"
	fs.StringVar(&r.file, "replay", "", "replay the requests recorded in this `file` (HAR, access log, JSON lines, or a --record log) at their recorded times, open loop, to the URL's host (docs/replay.md)")
	fs.StringVar(&r.format, "replay-format", "", "--replay file `format`: har, combined (access log), jsonl or wirebench (default: guessed)")
	fs.StringVar(&r.fields, "replay-fields", "", "--replay JSON lines: `map` of fields, e.g. ts=time,method=verb,path=uri,status=code (also headers=, body=; dotted names reach into objects)")
	fs.Float64Var(&r.speed, "speed", 1, "--replay: `factor` on the recorded rate (2: twice as fast)")
	fs.BoolVar(&r.loop, "loop", false, "--replay: repeat the recording until -d")
	r.registerShare(fs)
	fs.StringVar(&r.host, "rewrite-host", "", "--replay: Host header to send (default the URL's host; 'recorded': each request's own)")
	fs.StringArrayVar(&r.drop, "drop-header", nil, "--replay: do not send this recorded `header` (repeatable; e.g. Cookie, Authorization)")
	fs.BoolVar(&r.dryRun, "replay-dry-run", false, "--replay: schedule and prepare every request but send none (the schedule's own timing and memory)")
	fs.StringVar(&r.record, "record", "", "write every request sent to this `file` as wirebench's request log, to --replay later (raw mode and --replay; 0600, never over a file without --force; secrets redacted, KV and large bodies kept out: --record-secrets, --record-bodies)")
	r.registerKeep(fs)
}

// registerShare adds the bounds on what a replay may leave out.
func (r *replayFlags) registerShare(fs *pflag.FlagSet) {
	r.maxGap = replay.DefaultMaxGap
	fs.Var(flags.Duration{D: &r.maxGap}, "max-gap", "--replay: cut a recorded pause longer than this `long` to it, counted (0: keep every pause)")
	fs.BoolVar(&r.allowPartial, "allow-partial", false, fmt.Sprintf("--replay: exit 0 even when the run sent less than %.0f%% of the recording (lines skipped, entries too large, a run cut short)", replay.MinShare*100))
}

// registerKeep adds what a --record log keeps beyond its safe default.
func (r *replayFlags) registerKeep(fs *pflag.FlagSet) {
	fs.BoolVar(&r.keep.Secrets, "record-secrets", false, "--record: keep the values of Authorization, Cookie, tokens and other secret headers and query parameters (default: REDACTED; docs/replay.md lists them)")
	fs.BoolVar(&r.keep.Bodies, "record-bodies", false, "--record: keep the bodies of /kv/ requests and those over 64 KiB (default: kept out, their length noted)")
}

// createRecord opens a --record log: refused, as every output of ours,
// when the file exists and force is not given (checkNewOut), and then
// created exclusively, 0600, never through a symlink.
func createRecord(path string, force bool) (*os.File, error) {
	if err := checkNewOut(path, force); err != nil {
		return nil, err
	}
	return reqlog.Create(path, force)
}

// replayOnly are the flags that mean nothing without --replay.
var replayOnly = []string{"max-gap", "allow-partial", "replay-format", "replay-fields", "speed", "loop", "rewrite-host", "drop-header", "replay-dry-run"}

// replayClient is --replay's client: the recording, sent to url's host
// at its recorded times (package spec makes them the run's schedule).
func (f *loadFlags) replayClient(c *spec.Client, url string) (func(error) error, error) {
	r := &f.replay
	o, err := f.replayOptions(url)
	if err != nil {
		return nil, err
	}
	if r.record != "" {
		if o.Record, err = createRecord(r.record, f.outs.force); err != nil {
			return nil, loadUsagef("--record: %v", err)
		}
		o.RecordKeep = r.keep
	}
	if spec.IsGRPCReplay(&o) {
		return f.grpcReplayClient(c, o) // load_grpc.go
	}
	if g := f.grpc; len(g.o.Protos) > 0 || g.o.Protoset != "" || len(g.o.ImportPaths) > 0 || g.tls {
		if o.Record != nil {
			o.Record.Close()
		}
		return nil, loadUsagef("--proto, --import-path, --protoset and --tls are for a recording of gRPC calls; %s is not one (docs/grpc.md)", r.file)
	}
	c.Replay = &o
	return func(err error) error {
		return loadUsagef("%s%s", r.fileFlag, strings.TrimPrefix(err.Error(), "replay: "))
	}, nil
}

// replayOptions checks the flags a replay cannot take and makes its
// options (no Record).
func (f *loadFlags) replayOptions(url string) (replay.Options, error) {
	r := &f.replay
	for _, c := range []struct {
		bad  bool
		what string
	}{
		{f.o.Rate > 0 || f.o.Open || f.stages != "", "-r, --open and --stages: the recording is the schedule (use --speed)"},
		{f.scenario != "" || f.stream.Kind != "" || f.browser.Kind != "", "--scenario, --stream and --browser"},
		{r.fs.Changed("method") || r.fs.Changed("body") || len(f.hdrs) > 0, "-m, -b and -H: requests are as recorded (--drop-header drops)"},
		{f.o.Requests > 0, "-n: the recording sets the count (-d bounds the time)"},
		{f.raw.CertFile != "", "--cert and --key (a client certificate) yet"},
	} {
		if c.bad {
			return replay.Options{}, loadUsagef("--replay does not take %s", c.what)
		}
	}
	if r.fs.Changed("speed") && !(r.speed > 0) {
		return replay.Options{}, loadUsagef("--speed %g: want > 0 (2: twice as fast, 0.5: half)", r.speed)
	}
	fields, err := replay.ParseFieldMap(r.fields)
	if err != nil {
		return replay.Options{}, loadUsagef("%s: %s", r.fieldsFlag, strings.TrimPrefix(err.Error(), "replay: "))
	}
	co := f.raw.Options // the connection flags, as load's
	co.URL, co.Timeout = url, f.o.Timeout
	return replay.Options{
		File:        r.file,
		Format:      r.format,
		Fields:      fields,
		Speed:       r.speed,
		Loop:        r.loop,
		Options:     co,
		MaxGap:      r.gap(),
		Host:        r.host,
		DropHeaders: r.drop,
		DryRun:      r.dryRun,
		AsFormat:    r.asFormat,
	}, nil
}

// gap is --max-gap as replay.Options takes it (0 there is the default).
func (r *replayFlags) gap() time.Duration {
	if r.maxGap <= 0 {
		return -1
	}
	return r.maxGap
}

// checkReplayFlags refuses replay flags without --replay, and --record
// where it does not apply.
func (f *loadFlags) checkReplayFlags() error {
	r := &f.replay
	if r.file == "" {
		for _, n := range replayOnly {
			if r.fs.Changed(n) {
				return loadUsagef("--%s applies to --replay", n)
			}
		}
		if r.record == "" {
			for _, n := range []string{"record-secrets", "record-bodies"} {
				if r.fs.Changed(n) {
					return loadUsagef("--%s applies to --record", n)
				}
			}
		}
		if r.record != "" && (f.scenario != "" || f.stream.Kind != "" || f.browser.Kind != "") {
			return loadUsagef("--record records raw mode and --replay; to record a scenario's requests, run the server with serve --record")
		}
	}
	return nil
}

// writeReplaySummary adds what a --record log holds and what a replay
// measured (spec.Made.Replayed records it): the achieved timing error and
// what the recording held.
func writeReplaySummary(w io.Writer, m *spec.Made, res *results.Load) {
	if st, ok := m.RecordStats(); ok {
		fmt.Fprintf(w, "\n  record        %s\n", recordLine("--record", st))
	}
	if run, ok := m.Replayed(res); ok {
		report.WriteReplay(w, res, run)
	}
}

// serveRecordFlags are serve's --record and what its log keeps.
type serveRecordFlags struct {
	path  string
	force bool
	keep  reqlog.Options
}

func (r *serveRecordFlags) register(fs *pflag.FlagSet) {
	fs.StringVar(&r.path, "record", "", "log every REST request to this `file` as it arrives (time, method, target, headers, body, status), for load --replay (nethttp engine; 0600, never over a file without --force; secrets redacted, KV and large bodies kept out; docs/replay.md)")
	fs.BoolVar(&r.force, "force", false, "--record: replace an existing file")
	fs.BoolVar(&r.keep.Secrets, "record-secrets", false, "--record: keep the values of Authorization, Cookie, tokens and other secret headers and query parameters (default: REDACTED; docs/replay.md lists them)")
	fs.BoolVar(&r.keep.Bodies, "record-bodies", false, "--record: keep the bodies of /kv/ requests and those over 64 KiB (default: kept out, their length noted)")
}

// open opens serve --record's file; done flushes and closes it after the
// server shut down, and says on w what the log kept out.
func (r *serveRecordFlags) open(fs *pflag.FlagSet, stderr io.Writer) (lw *reqlog.Writer, done func() error, err error) {
	if r.path == "" {
		for _, n := range []string{"force", "record-secrets", "record-bodies"} {
			if fs.Changed(n) {
				return nil, nil, usagef("--%s applies to --record", n)
			}
		}
		return nil, func() error { return nil }, nil
	}
	f, err := createRecord(r.path, r.force)
	if err != nil {
		return nil, nil, usagef("--record: %v", err)
	}
	lw = reqlog.NewWriter(f, r.keep)
	return lw, func() error {
		err := lw.Flush()
		if cerr := f.Close(); err == nil && cerr != nil {
			err = fmt.Errorf("--record: %w", cerr)
		}
		fmt.Fprintf(stderr, "serve: --record: %s\n", recordLine(r.path, lw.Stats()))
		return err
	}, nil
}

// recordLine says what a --record log holds and what it kept out.
func recordLine(path string, st reqlog.WriterStats) string {
	s := fmt.Sprintf("%d requests written to %s", st.Requests, path)
	if st.Redacted > 0 {
		s += fmt.Sprintf("; %d secret values REDACTED (--record-secrets keeps them)", st.Redacted)
	}
	if st.BodiesOut > 0 {
		s += fmt.Sprintf("; %d bodies kept out (KV or over 64 KiB; --record-bodies keeps them)", st.BodiesOut)
	}
	return s
}
