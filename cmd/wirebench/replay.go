package main

import (
	"context"
	"fmt"
	"io"

	"github.com/spf13/pflag"

	"github.com/wirebench/wirebench/load/flags"
	"github.com/wirebench/wirebench/load/replay/reqlog"
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
	var target string
	fs := newFlagSet(env, "replay", replayUsage)
	fs.StringVar(&target, "target", "", "send to this `URL` (http://host:port or https://; the recorded hosts are never contacted)")
	f.RegisterReplay(fs)
	fs.StringVar(&f.out, "out", "", "write the result (schema wirebench.load/v2, one operation per endpoint) to this `file`; - for stdout")
	f.outs.register(fs, &f.Force)
	fs.StringArrayVar(&f.thresholds, "threshold", nil, "pass/fail `criterion` (repeatable): p99<50ms, errors<1%")
	fs.BoolVar(&f.latency, "latency", false, "print the latency distribution (50, 75, 90, 99%)")
	fs.StringVar(&f.percentiles, "percentiles", "", "print the latency at these `percentiles`, e.g. 50,90,99,99.9")
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
		f.Replay.File = pos[0]
	}
	if f.Replay.Loop && f.Options.Duration == 0 {
		return usagef("--loop repeats until -d: give -d")
	}
	if done, err := f.link.across(ctx, env, "replay", args); done {
		return err
	}
	if len(search.slo) > 0 {
		return runReplaySearch(ctx, env, &f, &search, fs, target, args)
	}
	return f.run(ctx, env, fs, args, []string{target})
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
	f, err := flags.CreateRecord(r.path, r.force)
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
