package replay

import (
	"context"
	"fmt"

	"github.com/wirebench/wirebench/capacity"
	"github.com/wirebench/wirebench/load"
	"github.com/wirebench/wirebench/measure"
	"github.com/wirebench/wirebench/results"
)

// Bounds of a speed search where its options give no rates: the
// recording at 1/100 of its rate to 100 times it.
const (
	DefaultMinSpeed = 0.01
	DefaultMaxSpeed = 100
	// SearchGrowth is the factor between a speed search's first steps:
	// 2 reaches 100× from speed 1 in seven steps, finer than rates' 4
	// because a recording's own rate is already a good first guess.
	SearchGrowth = 2
)

// SpeedSearch is a search of the highest speed at which a recording's
// replay meets an SLO: capacity's search, its rates the recording's own
// rate × speed.
type SpeedSearch struct {
	// Replay is the recording, the target and how to connect; Speed,
	// Loop, DryRun and Record are the search's own.
	Replay Options
	// Capacity holds the SLO and the search's bounds. Its rates are
	// req/s; those left 0 are the recording's: MinRate and MaxRate at
	// MinSpeed and MaxSpeed, StartRate its own rate (speed 1, the
	// recording as it was), Growth SearchGrowth.
	Capacity capacity.Options
	// MinSpeed and MaxSpeed bound the speeds tried where Capacity has no
	// rate bound (0: DefaultMinSpeed, DefaultMaxSpeed).
	MinSpeed, MaxSpeed float64
	// Base are the engine options of every step (timeout, graceful stop).
	Base load.Options
	// ServerPID, if > 0, is the server whose CPU is sampled over each step.
	ServerPID int
}

// Prepare checks that the recording can be replayed to its target
// (target, transport and file, before reading it all) and surveys it:
// a search's first step, whose Rate a caller shows progress in.
func Prepare(o Options) (Recording, error) {
	sc, err := New(o)
	if err != nil {
		return Recording{}, err
	}
	sc.Close()
	return Survey(o)
}

// Search searches s's highest speed over rec (Prepare's) and returns the
// capacity result with the answer in speed in its Config (Recording,
// Speed) and the machine it ran on. Its errors are capacity.Search's.
func Search(ctx context.Context, rec Recording, s SpeedSearch) (*results.Capacity, error) {
	base := rec.Rate()
	o := s.Capacity
	minS, maxS := orDefault(s.MinSpeed, DefaultMinSpeed), orDefault(s.MaxSpeed, DefaultMaxSpeed)
	if !(minS > 0) || !(maxS >= minS) || maxS > 1e9 {
		return nil, fmt.Errorf("%w: min speed %g, max speed %g: want 0 < min ≤ max ≤ 1e9", capacity.ErrOptions, minS, maxS)
	}
	o.MinRate = orDefault(o.MinRate, minS*base)
	o.MaxRate = orDefault(o.MaxRate, maxS*base)
	o.StartRate = orDefault(o.StartRate, min(max(base, o.MinRate), o.MaxRate))
	o.Growth = orDefault(o.Growth, SearchGrowth)
	res, err := capacity.Search(ctx, o, CapacityStep(s.Replay, rec, s.Base, o.Warmup, s.ServerPID))
	if err != nil {
		return nil, err
	}
	res.Scenario = "replay"
	res.Config = results.Config{Replay: results.NewClientOptions(s.Replay),
		Recording: &results.Recording{Requests: rec.Requests, Period: rec.Period, Rate: base, Malformed: rec.Malformed},
		Speed:     &results.SpeedRange{Answer: res.Rate / base, Low: res.Low / base, High: res.High / base}}
	res.Env = measure.Environment(context.WithoutCancel(ctx))
	return res, nil
}

func orDefault(v, def float64) float64 {
	if v == 0 {
		return def
	}
	return v
}
