package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"

	"github.com/wirebench/wirebench/load/flags"
	"github.com/wirebench/wirebench/toon"
)

func init() {
	register("toon", command{
		summary: "convert JSON to TOON (encode) or TOON to JSON (decode) on stdin/stdout",
		run:     runTOON,
	})
}

// runTOON converts between JSON and TOON with package toon, keeping key
// order and every digit of numbers. Errors name the line and column of the
// input.
func runTOON(ctx context.Context, env *cliEnv, args []string) error {
	fs := newFlagSet(env, "toon", "encode|decode [flags] < in > out")
	delim := fs.String("delimiter", "comma", "encode: document delimiter: comma (,), tab or pipe (|)")
	indent := fs.Int("indent", 2, "spaces per indentation level (encode and decode)")
	strict := fs.Bool("strict", true, "decode: enforce the spec's strict-mode checks (counts, indentation, duplicate keys)")
	if len(args) > 0 && args[0] == "help" {
		fs.Usage()
		return nil
	}
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if fs.NArg() == 0 {
		return usagef("want encode or decode")
	}
	mode := fs.Arg(0)
	if fs.NArg() > 1 {
		return usagef("unexpected arguments %q: input is read from stdin", fs.Args()[1:])
	}
	if err := flags.CheckInt("--indent", int64(*indent), 1, maxTOONIndent, ""); err != nil {
		return err
	}
	in, err := io.ReadAll(env.stdin)
	if err != nil {
		return fmt.Errorf("reading stdin: %w", err)
	}
	var out []byte
	switch mode {
	case "encode":
		d, err := toon.ParseDelimiter(*delim)
		if err != nil {
			return usagef("%v", err)
		}
		v, err := toon.FromJSON(in)
		if err != nil {
			return fmt.Errorf("input: %w", err)
		}
		if out, err = (toon.MarshalOptions{Indent: *indent, Delimiter: d}).Marshal(v); err != nil {
			return err
		}
	case "decode":
		var v any
		if err := (toon.UnmarshalOptions{Indent: *indent, Lenient: !*strict}).Unmarshal(in, &v); err != nil {
			return fmt.Errorf("input: %w", err)
		}
		compact, err := toon.ToJSON(v)
		if err != nil {
			return err
		}
		var buf bytes.Buffer
		if err := json.Indent(&buf, compact, "", "  "); err != nil {
			return err
		}
		out = buf.Bytes()
	default:
		return usagef("unknown mode %q: want encode or decode", mode)
	}
	// A TOON document has no trailing newline (spec §12); the CLI ends its
	// output with one, as text files do, and decoders accept it.
	out = append(out, '\n')
	_, err = env.stdout.Write(out)
	return err
}
