package flags

import (
	"math"
	"time"

	"github.com/wirebench/wirebench/load"
	"github.com/wirebench/wirebench/results"
)

// Limits of load's flags that are not the engine's (load.Max*): a value
// outside its range is a usage error naming the flag, the value and the
// range, before anything is allocated or started (docs/limits.md).
const (
	MaxMessages    = 1_000_000 // --messages
	MaxBatch       = 10_000    // --batch
	MaxBarrierWait = 24 * time.Hour
)

// CheckLimits checks load's numbers; the first out of range is the error.
func (f *Load) CheckLimits() error {
	o := f.Options
	return First(
		CheckInt("-c", int64(o.Concurrency), 1, load.MaxConcurrency, " (each VU is a goroutine and a connection)"),
		CheckInt("-n", o.Requests, 0, load.MaxRequests, ""),
		CheckFloat("-r", o.Rate, 0, load.MaxRate),
		CheckDuration("-d", o.Duration, 0, load.MaxDuration),
		CheckDuration("-t", o.Timeout, time.Millisecond, load.MaxTimeout),
		CheckDuration("--graceful-stop", o.GracefulStop, 0, load.MaxGracefulStop),
		CheckInt("--conns", int64(f.Raw.Connections), 1, load.MaxConnections, ""),
		CheckInt("--messages", int64(f.Stream.Messages), 1, MaxMessages, ""),
		CheckInt("--batch", int64(f.Browser.Batch), 1, MaxBatch, ""),
		CheckDuration("--barrier-lead", f.Dist.BarrierLead, time.Millisecond, MaxBarrierWait),
		CheckDuration("--barrier-timeout", f.Dist.BarrierLimit, time.Millisecond, MaxBarrierWait),
	)
}

// CheckStages checks a ramp's targets and length: VUs in closed loop,
// requests/s in open loop.
func CheckStages(st []results.Stage, open bool) error {
	hi, unit := float64(load.MaxConcurrency), "VUs"
	if open {
		hi, unit = load.MaxRate, "requests/s"
	}
	var total time.Duration
	for i, s := range st {
		if math.IsNaN(s.Target) || s.Target < 0 || s.Target > hi {
			return Usagef("--stages: stage %d target %g: want 0..%g %s", i+1, s.Target, hi, unit)
		}
		if s.Duration < 0 {
			return Usagef("--stages: stage %d duration %v: want >= 0", i+1, s.Duration)
		}
		if total += s.Duration; total > load.MaxDuration {
			return Usagef("--stages: %v in all, want at most %v", total, load.MaxDuration)
		}
	}
	return nil
}
