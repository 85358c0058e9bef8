package main

import (
	"context"

	"github.com/wirebench/wirebench/load/flags"
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
	f.RegisterOutput(fs, &f.Force, "write the result (schema wirebench.load/v2, one operation per endpoint) to this `file`; - for stdout")
	f.link.register(fs) // --link…: link.go
	var search flags.Search
	search.RegisterSpeeds(fs) // --slo…
	fs.Lookup("duration").DefValue = ""
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if err := search.CheckSpeeds(fs); err != nil {
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
	if len(search.SLO) > 0 {
		return runReplaySearch(ctx, env, &f, &search, fs, target, args)
	}
	return f.run(ctx, env, fs, args, []string{target})
}
