package main

import (
	"context"
	"fmt"
	"io"
	"strings"

	"github.com/wirebench/wirebench/bulk"
)

func init() {
	register("gen", command{
		summary: "write a deterministic dataset to stdout (gen airports -n N --format F)",
		run:     runGen,
	})
}

// runGen streams the generated airports: the same n and format give the
// same bytes, and nothing is held beyond one record and the write buffer.
func runGen(ctx context.Context, env *cliEnv, args []string) error {
	fs := newFlagSet(env, "gen", "airports [-n N] [--format json|ndjson|toon|protobuf|csv] [--checksum]")
	n := fs.Int("n", 1000, "number of records")
	format := fs.String("format", bulk.FormatJSON, "`format`: "+strings.Join(bulk.Formats(), ", "))
	sum := fs.Bool("checksum", false, "print the dataset's row count and checksum (what the airports table must hold after the upload) instead of the data")
	if len(args) > 0 && args[0] == "airports" {
		args = args[1:] // the dataset comes first; flags follow it
	} else if len(args) == 0 || (args[0] != "-h" && args[0] != "--help") {
		return usagef("gen: want the dataset name first: gen airports -n N --format F")
	}
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return usagef("unexpected argument %q", fs.Arg(0))
	}
	if *n < 0 || *n > bulk.MaxGenerate {
		return usagef("-n: want 0..%d, got %d", bulk.MaxGenerate, *n)
	}
	if bulk.MediaType(*format) == "" {
		return usagef("--format: want one of %s, got %q", strings.Join(bulk.Formats(), ", "), *format)
	}
	if *sum {
		fmt.Fprintln(env.stdout, bulk.GeneratedChecksum(*n))
		return nil
	}
	_, err := bulk.Generate(ctxWriter{ctx, env.stdout}, *format, *n)
	return err
}

// ctxWriter stops a long generation when ctx is done (Ctrl-C).
type ctxWriter struct {
	ctx context.Context
	w   io.Writer
}

func (c ctxWriter) Write(p []byte) (int, error) {
	if err := c.ctx.Err(); err != nil {
		return 0, err
	}
	return c.w.Write(p)
}
