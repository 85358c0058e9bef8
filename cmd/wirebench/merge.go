package main

import (
	"context"
	"fmt"
	"io"
	"os"

	"github.com/wirebench/wirebench/load"
	"github.com/wirebench/wirebench/results"
)

func init() {
	register("merge", command{
		summary: "merge load result files (segments of one test) exactly; JSON to stdout or --out",
		run:     runMerge,
	})
}

func runMerge(ctx context.Context, env *cliEnv, args []string) error {
	fs := newFlagSet(env, "merge", "[--out all.json [--force]] a.json b.json ...")
	summary := fs.Bool("summary", false, "also print the merged summary on stderr")
	out := fs.String("out", "", "write the merged result to this `file` (whole or not at all) instead of stdout")
	force := fs.Bool("force", false, "replace an existing --out file")
	pos, err := parseInterspersed(fs, args)
	if err != nil {
		return err
	}
	if len(pos) == 0 {
		return usagef("want result files to merge")
	}
	if err := checkNewOut(*out, *force); err != nil {
		return err
	}
	var rs []*load.Result
	for _, path := range pos {
		r, err := readLoadResult(path)
		if err != nil {
			return err
		}
		rs = append(rs, r)
	}
	m, err := load.Merge(rs...)
	if err != nil {
		return err
	}
	if *summary {
		if err := load.WriteSummary(env.stderr, m); err != nil {
			return err
		}
	}
	if *out == "" {
		return m.WriteJSON(env.stdout)
	}
	return results.WriteFile(*out, *force, m.WriteJSON)
}

func readLoadResult(path string) (*load.Result, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	r, err := load.ReadResult(io.LimitReader(f, results.MaxFileSize))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return r, nil
}
