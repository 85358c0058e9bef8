package capacity

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/wirebench/wirebench/load"
	"github.com/wirebench/wirebench/measure"
	"github.com/wirebench/wirebench/results"
)

// Run searches sc's capacity with the load engine: each step is
// load.Run in open loop at the step's rate, once for the warm-up (its
// result discarded) and once measured. base are the engine options every
// step starts from (timeout, graceful stop); rate, duration, concurrency
// and the open loop are the step's. serverPID, if > 0, is the server
// process whose CPU is sampled over each measured window.
func Run(ctx context.Context, opts Options, base load.Options, sc load.Scenario, serverPID int) (*results.Capacity, error) {
	o, err := opts.withDefaults()
	if err != nil {
		return nil, err
	}
	base.Arrivals, base.Seed = o.Arrivals, o.Seed
	return Search(ctx, opts, EngineStep(base, sc, opts.Warmup, serverPID))
}

// EngineStep is the StepFunc of Run, for callers that wrap it. Its steps'
// arrival process is base's (Options.Arrivals must say the same; empty:
// Poisson, the search's default).
func EngineStep(base load.Options, sc load.Scenario, warmup time.Duration, serverPID int) StepFunc {
	if warmup == 0 {
		warmup = DefaultWarmup
	}
	return func(ctx context.Context, rate float64, conc int, d time.Duration) (Measurement, error) {
		o := base
		o.Open, o.Rate, o.Concurrency, o.Requests, o.Stages, o.StartTarget = true, rate, conc, 0, nil, 0
		o.Progress, o.Barrier = nil, nil
		if o.Arrivals == "" {
			o.Arrivals = DefaultArrivals
		}
		if warmup > 0 {
			o.Duration = warmup
			if _, err := load.Run(ctx, o, sc); err != nil {
				return Measurement{}, fmt.Errorf("warm-up: %w", err)
			}
		}
		var before measure.ProcSample
		if serverPID > 0 {
			s, err := measure.SampleProc(serverPID)
			if err != nil {
				return Measurement{}, fmt.Errorf("server CPU: %w", err)
			}
			before = s
		}
		o.Duration = d
		cpus := watchedCPUs(serverPID)
		stat0, statErr := measure.ReadCPUStat()
		res, err := load.Run(ctx, o, sc)
		if err != nil {
			return Measurement{}, err
		}
		m := Measurement{Load: res}
		if serverPID > 0 {
			after, err := measure.SampleProc(serverPID)
			if err != nil {
				return Measurement{}, fmt.Errorf("server CPU: %w", err)
			}
			m.ServerCPU = after.CPU() - before.CPU()
		}
		if stat1, err := measure.ReadCPUStat(); err == nil && statErr == nil {
			d := stat1.Since(stat0, cpus)
			m.OtherCPU = max(0, d.Busy-res.CPU.User-res.CPU.System-m.ServerCPU)
			if d.Total > 0 {
				m.Steal = d.Steal.Seconds() / d.Total.Seconds()
			}
		}
		return m, nil
	}
}

// watchedCPUs are the CPUs the client and the server may run on, whose
// other tenants could disturb a step (every CPU when the server's are
// unknown).
func watchedCPUs(serverPID int) []int {
	if serverPID <= 0 {
		return nil
	}
	srv := measure.AffinityOf(serverPID)
	if len(srv) == 0 {
		return nil
	}
	cpus := append(measure.Affinity(), srv...)
	slices.Sort(cpus)
	return slices.Compact(cpus)
}
