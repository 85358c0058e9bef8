package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/wirebench/wirebench/load/flags"
	"github.com/wirebench/wirebench/payload"
	"github.com/wirebench/wirebench/report"
	"github.com/wirebench/wirebench/results"
)

func init() {
	register("payload", command{
		summary: "compare every wire format on your own payloads: bytes, codec cost, lossless round trip",
		run:     runPayload,
	})
}

// Bounds of payload's flags (docs/limits.md).
const (
	maxPayloadSamples = 1_000_000
	maxPayloadTime    = time.Minute
	maxPayloadDepth   = 1000
)

// inputError is input the lab cannot read: one line, exit 2, as a bad
// flag is (the command was given something it cannot use).
type inputError struct{ err error }

func (e inputError) Error() string { return e.err.Error() }
func (e inputError) Unwrap() error { return e.err }
func (inputError) ExitCode() int   { return 2 }

func runPayload(ctx context.Context, env *cliEnv, args []string) error {
	fs := newFlagSet(env, "payload", "[flags] FILE…  (JSON documents, a JSON array, JSON lines, a HAR or a request log)")
	input := fs.String("input", "", "kind of every FILE: json, har or wirebench (serve/load --record); default: guessed")
	bodies := fs.String("bodies", payload.BodiesRequests, "HAR input: the JSON bodies taken, of the requests, the responses (what your API sends) or both")
	whole := fs.Bool("whole", false, "a top-level JSON array is one message (a list response), not a list of samples")
	samples := fs.Int("sample", payload.DefaultSamples, "measure at most `N` samples: more are sampled uniformly, and the output says so")
	seed := fs.Uint64("seed", 1, "seed of the --sample choice")
	per := fs.Duration("time", payload.DefaultTime, "time of each timed loop (a format's encode, decode, a compression); 0 skips timing")
	comps := fs.String("compress", strings.Join(payload.Compressions, ","), "compressions to measure: gzip, zstd, br (comma-separated; \"none\" for none)")
	maxFile := fs.Int64("max-file", payload.DefaultMaxFileSize, "refuse an input file larger than this many `bytes`")
	maxSample := fs.Int("max-sample", payload.DefaultMaxSample, "refuse a sample (document, element, line, body) larger than this many `bytes`")
	maxKept := fs.Int64("max-kept", payload.DefaultMaxKept, "keep at most this many `bytes` of samples to measure (estimated: their JSON and parsed trees); fewer than --sample are kept when they are large")
	maxDepth := fs.Int("max-depth", payload.DefaultMaxDepth, "refuse a sample nested deeper than this (the codecs' own limit is 64)")
	protoFile := fs.String("proto", "", "protobuf schema: a .proto `file` compiled at run time (no protoc needed)")
	protoset := fs.String("protoset", "", "protobuf schema: a FileDescriptorSet `file` (protoc --descriptor_set_out --include_imports, buf build -o)")
	message := fs.String("message", "", "the message each sample is, by full name (pkg.Msg); default: the file's only message")
	protoPath := fs.StringArray("proto-path", nil, "a `dir` to find the .proto's imports in (repeatable; its own directory and the well-known types are always searched)")
	out := fs.String("out", "", "also write the result as JSON to this `file` (for wirebench report)")
	force := fs.Bool("force", false, "replace an existing --out file")
	pos, err := parseInterspersed(fs, args)
	if err != nil {
		return err
	}
	if len(pos) == 0 {
		return usagef("want at least one FILE of sample payloads")
	}
	for _, err := range []error{
		flags.CheckInt("--sample", int64(*samples), 1, maxPayloadSamples, ""),
		flags.CheckInt("--max-file", *maxFile, 1, 1<<40, ""),
		flags.CheckInt("--max-sample", int64(*maxSample), 1, 1<<30, ""),
		flags.CheckInt("--max-depth", int64(*maxDepth), 1, maxPayloadDepth, ""),
		flags.CheckInt("--max-kept", *maxKept, 1<<20, 1<<40, ""),
		flags.CheckDuration("--time", *per, 0, maxPayloadTime),
	} {
		if err != nil {
			return err
		}
	}
	o := payload.Options{Input: *input, Whole: *whole, Bodies: *bodies, Samples: *samples, Seed: *seed, Time: *per,
		MaxFileSize: *maxFile, MaxSample: *maxSample, MaxKept: *maxKept, MaxDepth: *maxDepth, Compressions: payload.ParseCompressions(*comps)}
	if *per == 0 {
		o.Time = -1
	}
	if err := o.Check(); err != nil {
		return usagef("--%s", strings.TrimPrefix(err.Error(), payload.ErrOptions.Error()+": "))
	}
	if err := checkNewOut(*out, *force); err != nil {
		return err
	}
	if o.Schema, err = payload.LoadSchema(ctx, *protoFile, *protoset, *protoPath, *message); errors.Is(err, payload.ErrOptions) {
		return usagef("%s", strings.TrimPrefix(err.Error(), payload.ErrOptions.Error()+": "))
	} else if err != nil {
		return inputError{err}
	}
	o.Progress = func(step string) { fmt.Fprintf(env.stderr, "wirebench payload: measuring %s\n", step) }
	var live bool
	o.ReadProgress, live = readProgress(env.stderr, isTerminal(env.stderr))
	lab, err := payload.Run(ctx, pos, o)
	if live {
		// what a failure left of the live line; a finished file ended it
		fmt.Fprint(env.stderr, "\r\033[K")
	}
	if err != nil {
		if errors.Is(err, payload.ErrInput) {
			return inputError{err}
		}
		return err
	}
	lab.Options = &results.PayloadOptions{Input: *input, Whole: *whole, Sample: *samples, Seed: *seed, Time: per.String(),
		Compress: *comps, Proto: *protoFile, Protoset: *protoset, Message: *message, MaxFile: *maxFile, MaxSample: *maxSample, MaxKept: *maxKept, MaxDepth: *maxDepth}
	if *bodies != payload.BodiesRequests {
		lab.Options.Bodies = *bodies
	}
	if *out != "" {
		if err := results.WriteFile(*out, *force, func(w io.Writer) error { return results.WritePayloadLab(w, lab) }); err != nil {
			return err
		}
	}
	return report.WritePayloadLabText(env.stdout, lab)
}

// progressLineBytes is the file size from which reading is reported on a
// stderr that is not a terminal: a line a tenth of the file.
const progressLineBytes = 64 << 20

// readProgress returns payload's ReadProgress callback: on a terminal, a
// line redrawn every quarter second (a bar, the bytes, the time so far and
// left, the samples), ended when the file is read; elsewhere (a log) the
// same line at each tenth of a file of progressLineBytes or more. live
// says whether a redrawn line may be left to clear.
func readProgress(w io.Writer, terminal bool) (report func(payload.ReadProgress), live bool) {
	if terminal {
		return func(p payload.ReadProgress) {
			end := "\033[K"
			if p.Done {
				end += "\n"
			}
			fmt.Fprint(w, "\rwirebench payload: reading "+payload.FormatReadProgress(p)+end)
		}, true
	}
	var file string
	var tenth int64
	return func(p payload.ReadProgress) {
		if p.Size < progressLineBytes {
			return
		}
		if p.File != file {
			file, tenth = p.File, 0
		}
		if t := p.Read * 10 / p.Size; t > tenth && t < 10 || p.Done {
			tenth = t
			fmt.Fprintln(w, "wirebench payload: reading "+payload.FormatReadProgress(p))
		}
	}, false
}
