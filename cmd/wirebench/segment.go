package main

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/pflag"

	"github.com/wirebench/wirebench/load"
	"github.com/wirebench/wirebench/load/flags"
	"github.com/wirebench/wirebench/results"
)

// distFlags are load's flags for one test run as n segments (separate
// processes, machines or pods) that start together: --start-at and the
// --barrier family. --segment itself is parsed here too, for auto/n.
type distFlags struct {
	startAt      string
	barrier      string
	barrierLead  time.Duration
	barrierLimit time.Duration
}

func (d *distFlags) register(fs *pflag.FlagSet) {
	fs.StringVar(&d.startAt, "start-at", "", "start the schedule at this `time` (RFC 3339 or Unix seconds), after connecting: segments started together")
	fs.StringVar(&d.barrier, "barrier", "", "start when all n segments have reached this `dir` (a shared volume), --barrier-lead after the last")
	d.barrierLead, d.barrierLimit = load.DefaultBarrierLead, load.DefaultBarrierTimeout
	fs.Var(flags.Duration{D: &d.barrierLead}, "barrier-lead", "time from the last segment's arrival at --barrier to the start")
	fs.Var(flags.Duration{D: &d.barrierLimit}, "barrier-timeout", "give up when the other segments have not reached --barrier in this `long`")
}

// apply parses --segment (i/n, or auto/n from $JOB_COMPLETION_INDEX) and
// the start flags into o.
func (d *distFlags) apply(segment string, o *load.Options, getenv func(string) string) error {
	var err error
	if segment != "" {
		if o.Segment, err = results.ParseSegmentEnv(segment, getenv); err != nil {
			return loadUsagef("--segment: %s", cliMessage(err))
		}
	}
	if d.startAt != "" && d.barrier != "" {
		return loadUsagef("--start-at and --barrier both set the start: give one")
	}
	if d.startAt != "" {
		if o.StartAt, err = load.ParseStartAt(d.startAt); err != nil {
			return loadUsagef("--start-at: %s", cliMessage(err))
		}
	}
	if d.barrier != "" {
		if o.Segment.N < 1 {
			return loadUsagef("--barrier needs --segment i/n (how many segments to wait for)")
		}
		if d.barrierLead <= 0 || d.barrierLimit <= 0 {
			return loadUsagef("--barrier-lead and --barrier-timeout must be > 0")
		}
		o.Barrier = load.FileBarrier{Dir: d.barrier, Segment: o.Segment, Lead: d.barrierLead, Timeout: d.barrierLimit}
	}
	return nil
}

// segmentOut resolves --out for a segment: a directory (an existing one,
// or a path ending in /) gets segment-<i>-of-<n>.json inside, so that the
// n pods of an Indexed Job can share one command line. A directory named
// with a trailing / is created.
func segmentOut(out string, seg results.Segment) (string, error) {
	if out == "" || out == "-" {
		return out, nil
	}
	fi, err := os.Stat(out)
	if isDir := err == nil && fi.IsDir(); !isDir && !strings.HasSuffix(out, "/") {
		return out, nil
	}
	if err := os.MkdirAll(out, 0o777); err != nil {
		return "", fmt.Errorf("--out: %w", err)
	}
	if seg.N < 1 {
		seg = results.Segment{I: 1, N: 1}
	}
	return filepath.Join(out, "segment-"+strings.ReplaceAll(seg.String(), "/", "-of-")+".json"), nil
}

// summaryWriter is where load prints its summary: stdout, unless the
// result itself goes there (--out -).
func summaryWriter(env *cliEnv, out string) io.Writer {
	if out == "-" {
		return env.stderr
	}
	return env.stdout
}
