package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"github.com/wirebench/wirebench/bulk"
	"github.com/wirebench/wirebench/results"
	"github.com/wirebench/wirebench/study"
)

// runBulkStudy runs `study bulk-upsert`: its trials are uploads of a fixed
// size rather than load runs, so it has its own runner and report (see
// study.RunBulkUpsert); the common flags mean the same. records and
// formats are its own flags.
func runBulkStudy(ctx context.Context, env *cliEnv, o study.Options, out string, records int, formats []string) error {
	for _, f := range formats {
		if bulk.MediaType(f) == "" {
			return usagef("--formats: %q is not one of %v", f, bulk.Formats())
		}
	}
	if records < 0 || records > bulk.MaxGenerate {
		return usagef("--records: want 1..%d", bulk.MaxGenerate)
	}
	if n := o.Ports.Hi - o.Ports.Lo + 1; o.Ports.Lo > 0 && n < 2 {
		return usagef("--ports %s holds %d port; bulk-upsert's server needs 2", o.Ports, n)
	}
	dir, err := results.NewRunDir(out, study.BulkUpsertName)
	if err != nil {
		return err
	}
	fmt.Fprintf(env.stderr, "study %s -> %s\n", study.BulkUpsertName, dir)
	res, runErr := study.RunBulkUpsert(ctx, study.BulkOptions{Options: o, Records: records, Formats: formats})
	if res == nil {
		return runErr
	}
	if err := study.WriteBulk(dir, res); err != nil {
		return err
	}
	md, err := os.ReadFile(filepath.Join(dir, "report.md"))
	if err != nil {
		return err
	}
	_, _ = env.stdout.Write(md)
	fmt.Fprintf(env.stderr, "\nwrote %s/{results.json,report.md,report.html,rss.csv}\n", dir)
	if runErr != nil {
		return runErr
	}
	var failed int
	for _, c := range res.Cells {
		ok := false
		for _, t := range c.Trials {
			ok = ok || t.Error == ""
		}
		if !ok {
			failed++
		}
	}
	if failed > 0 {
		return fmt.Errorf("%d of %d cells had no successful trial", failed, len(res.Cells))
	}
	return nil
}
