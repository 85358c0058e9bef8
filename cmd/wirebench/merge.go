package main

import (
	"context"
	"os"

	"github.com/wirebench/wirebench/load"
)

func init() {
	register("merge", command{
		summary: "merge load result files (segments of one test) exactly; writes JSON to stdout",
		run:     runMerge,
	})
}

func runMerge(ctx context.Context, env *cliEnv, args []string) error {
	fs := newFlagSet(env, "merge", "a.json b.json ... > all.json")
	summary := fs.Bool("summary", false, "also print the merged summary on stderr")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if fs.NArg() == 0 {
		return usagef("want result files to merge")
	}
	var rs []*load.Result
	for _, path := range fs.Args() {
		f, err := os.Open(path)
		if err != nil {
			return err
		}
		r, err := load.ReadResult(f)
		f.Close()
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
	return m.WriteJSON(env.stdout)
}
