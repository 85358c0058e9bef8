package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/wirebench/wirebench/results"
	"github.com/wirebench/wirebench/study"
)

// runBulkStudy runs `study bulk-upsert`: its trials are uploads of a fixed
// size rather than load runs, so it has its own runner and report (see
// study.RunBulkUpsert); the common flags mean the same. records and
// formats are its own flags.
func runBulkStudy(ctx context.Context, env *cliEnv, o study.Options, out string, records int, formats []string) error {
	bo := study.BulkOptions{Options: o, Records: records, Formats: formats}
	if err := bo.Check(); err != nil {
		return usagef("%s", strings.TrimPrefix(err.Error(), study.ErrDefinition.Error()+": "))
	}
	dir, err := results.NewRunDir(out, study.BulkUpsertName)
	if err != nil {
		return err
	}
	fmt.Fprintf(env.stderr, "study %s -> %s\n", study.BulkUpsertName, dir)
	res, runErr := study.RunBulkUpsert(ctx, bo)
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
	if failed := res.Unsuccessful(); failed > 0 {
		return fmt.Errorf("%d of %d cells had no successful trial", failed, len(res.Cells))
	}
	return nil
}
