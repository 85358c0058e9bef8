package main

import (
	"context"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/wirebench/wirebench/bulk"
	"github.com/wirebench/wirebench/load/flags"
	"github.com/wirebench/wirebench/load/scenario"
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
	fs := newFlagSet(env, "gen", "airports [-n N] [--format json|ndjson|toon|protobuf|csv] [--checksum | --checksum-sql | --post URL [--content-length]]")
	n := fs.IntP("records", "n", 1000, "number of `records`")
	format := fs.String("format", bulk.FormatJSON, "`format`: "+strings.Join(bulk.Formats(), ", "))
	post := fs.String("post", "", "stream the records to this `URL` (POST, e.g. http://127.0.0.1:8080/airports) as they are generated, instead of stdout; prints the reply, time and bytes on the wire")
	withLength := fs.Bool("content-length", false, "with --post: send a Content-Length (the body is generated twice, once to count it) instead of chunked encoding")
	sum := fs.Bool("checksum", false, "print the dataset's row count and checksum (what the airports table must hold after the upload) instead of the data: "+
		"\"N rows, sum S\", S the sum of each row's first 4 bytes of SHA3-256 over its fields as netstrings; the table prints the same line with: wirebench gen airports --checksum-sql | sqlite3 airports.db (docs/bulk.md)")
	sumSQL := fs.Bool("checksum-sql", false, "print the SQL that computes --checksum's line from an airports table, for the sqlite3 shell (which has sha3()): wirebench gen airports --checksum-sql | sqlite3 airports.db")
	flags.Aliases(fs, map[string]string{"n": "records"})
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if fs.NArg() != 1 || fs.Arg(0) != "airports" {
		return usagef("want the dataset name, airports (gen airports -n N --format F), got %q", fs.Args())
	}
	if *n < 0 || *n > bulk.MaxGenerate {
		return usagef("-n: want 0..%d, got %d", bulk.MaxGenerate, *n)
	}
	if bulk.MediaType(*format) == "" {
		return usagef("--format: want one of %s, got %q", strings.Join(bulk.Formats(), ", "), *format)
	}
	if *sumSQL {
		fmt.Fprint(env.stdout, bulk.ChecksumSQL)
		return nil
	}
	if *sum {
		fmt.Fprintln(env.stdout, bulk.GeneratedChecksum(*n))
		return nil
	}
	if *post != "" {
		return genPost(ctx, env, scenario.BulkOptions{URL: *post, Format: *format, Records: *n, ContentLength: *withLength})
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

// genPost streams the dataset to a server (scenario.PostBulk) and prints what
// happened; a reply other than 200 is an error (exit 1).
func genPost(ctx context.Context, env *cliEnv, o scenario.BulkOptions) error {
	res, err := scenario.PostBulk(ctx, o)
	if err != nil {
		return err
	}
	fmt.Fprintf(env.stdout, "HTTP %d in %v: %s\n", res.Status, res.Duration.Round(time.Millisecond), res.Reply)
	rate := ""
	if res.Status == 200 {
		rate = fmt.Sprintf(", %.0f records/s", float64(o.Records)/res.Duration.Seconds())
	}
	fmt.Fprintf(env.stdout, "%d records (%s)%s; body %d bytes, on the wire %d sent + %d received\n",
		o.Records, res.Checksum, rate, res.BodyBytes, res.WireSent, res.WireReceived)
	if res.AnsweredEarly {
		fmt.Fprintf(env.stdout, "the server answered before the body's end and stopped reading: %d of its bytes generated, the rest not sent\n", res.BodyBytes)
	}
	if res.Status != 200 {
		return fmt.Errorf("gen: %s answered %d", o.URL, res.Status)
	}
	return nil
}
