package main

import (
	"math"
	"time"

	"github.com/wirebench/wirebench/load"
	"github.com/wirebench/wirebench/load/flags"
	"github.com/wirebench/wirebench/results"
	"github.com/wirebench/wirebench/server"
)

// The CLI's numbers each have a range (docs/limits.md); a value outside it
// is a usage error naming the flag, the value and the range, before
// anything is allocated or started.

// Limits of flags that are the CLI's own (load's are load.Max*).
const (
	maxMessages    = 1_000_000 // load --messages
	maxBatch       = 10_000    // load --batch
	maxBarrierWait = 24 * time.Hour
	maxMergeWait   = 24 * time.Hour
	maxTOONIndent  = 64
	maxSeed        = 1_000_000 // serve --seed-users, --seed-todos: each list is served whole
	maxRateLimit   = 1e9       // serve --rate-limit, per second per client
)

// checkServeLimits bounds serve's numbers that size work done before it
// listens: --seed-users 9223372036854775807 looped for ever in the seed,
// deaf to SIGTERM. (Its other numbers are checked in serve.go.)
func checkServeLimits(o *server.Options) error {
	for _, err := range []error{
		flags.CheckInt("--seed-users", int64(o.SeedUsers), 0, maxSeed, ""),
		flags.CheckInt("--seed-todos", int64(o.SeedTodos), 0, maxSeed, ""),
		flags.CheckFloat("--rate-limit", o.RateLimit, 0, maxRateLimit),
	} {
		if err != nil {
			return err
		}
	}
	return nil
}

// checkLimits checks load's numbers; the first out of range is the error.
func (f *loadFlags) checkLimits() error {
	o := f.o
	for _, err := range []error{
		flags.CheckInt("-c", int64(o.Concurrency), 1, load.MaxConcurrency, " (each VU is a goroutine and a connection)"),
		flags.CheckInt("-n", o.Requests, 0, load.MaxRequests, ""),
		flags.CheckFloat("-r", o.Rate, 0, load.MaxRate),
		flags.CheckDuration("-d", o.Duration, 0, load.MaxDuration),
		flags.CheckDuration("-t", o.Timeout, time.Millisecond, load.MaxTimeout),
		flags.CheckDuration("--graceful-stop", o.GracefulStop, 0, load.MaxGracefulStop),
		flags.CheckInt("--conns", int64(f.raw.Connections), 1, load.MaxConnections, ""),
		flags.CheckInt("--messages", int64(f.stream.Messages), 1, maxMessages, ""),
		flags.CheckInt("--batch", int64(f.browser.Batch), 1, maxBatch, ""),
		flags.CheckDuration("--barrier-lead", f.dist.barrierLead, time.Millisecond, maxBarrierWait),
		flags.CheckDuration("--barrier-timeout", f.dist.barrierLimit, time.Millisecond, maxBarrierWait),
	} {
		if err != nil {
			return err
		}
	}
	return nil
}

// checkStages checks a ramp's targets and length: VUs in closed loop,
// requests/s in open loop.
func checkStages(st []results.Stage, open bool) error {
	hi, unit := float64(load.MaxConcurrency), "VUs"
	if open {
		hi, unit = load.MaxRate, "requests/s"
	}
	var total time.Duration
	for i, s := range st {
		if math.IsNaN(s.Target) || s.Target < 0 || s.Target > hi {
			return usagef("--stages: stage %d target %g: want 0..%g %s", i+1, s.Target, hi, unit)
		}
		if s.Duration < 0 {
			return usagef("--stages: stage %d duration %v: want >= 0", i+1, s.Duration)
		}
		if total += s.Duration; total > load.MaxDuration {
			return usagef("--stages: %v in all, want at most %v", total, load.MaxDuration)
		}
	}
	return nil
}
