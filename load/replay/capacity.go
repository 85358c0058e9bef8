package replay

import (
	"context"
	"fmt"
	"io"
	"math"
	"time"

	"github.com/wirebench/wirebench/capacity"
	"github.com/wirebench/wirebench/load"
	"github.com/wirebench/wirebench/measure"
	"github.com/wirebench/wirebench/results"
)

// Recording is what one pass over a recording holds, for a search in
// speed: its requests and a looped pass's length.
type Recording struct {
	Requests int64
	// Period is a looped pass's length at speed 1: the recorded span
	// and one mean gap more.
	Period    time.Duration
	Malformed int64
	Examples  []string // the first few lines or entries skipped, and why
}

// Rate is the recording's mean rate at speed 1, looped (req/s): the
// search's rate r is the speed r / Rate().
func (r Recording) Rate() float64 { return float64(r.Requests) / r.Period.Seconds() }

// Survey reads o's recording once, streamed and reordered as a replay
// reads it, and says what it holds.
func Survey(o Options) (Recording, error) {
	open := func() (Source, io.Closer, error) { return Open(o.File, o.Format, o.Fields) }
	s, err := NewSchedule(open, ScheduleOptions{Speed: 1, MaxGap: o.MaxGap})
	if err != nil {
		return Recording{}, err
	}
	var last time.Duration
	var n uint64
	for ; ; n++ {
		at, stop := s.Due(n)
		if stop {
			break
		}
		s.Take(n)
		last = at
	}
	s.Close()
	st := s.Stats()
	switch {
	case st.Err != nil:
		return Recording{}, fmt.Errorf("%w: %s: %v", ErrReplay, o.File, st.Err)
	case n == 0:
		return Recording{}, fmt.Errorf("%w: %s: no request could be read (%d malformed lines or entries; is the format right?)", ErrReplay, o.File, st.Malformed)
	case last == 0:
		// A looped pass of no length has no rate: speed 1 would be an
		// invented one (a millisecond's period: 1,000/s for one request).
		return Recording{}, fmt.Errorf("%w: %s: its %d requests share one time: it has no rate of its own to search in speed (record requests at two times at least)", ErrReplay, o.File, n)
	}
	return Recording{Requests: int64(n), Period: loopPeriod(last, int64(n)), Malformed: st.Malformed, Examples: st.Examples}, nil
}

// Partial says what a search over r leaves out of the recording when
// that is more than 1 - MinShare of its lines or entries (skipped:
// malformed or too large); "" when it is not. A search replays whole
// passes of what was read, so the share is fixed before it starts.
func (r Recording) Partial() string {
	total := r.Requests + r.Malformed
	if total == 0 || float64(r.Requests) >= MinShare*float64(total) {
		return ""
	}
	return fmt.Sprintf("the recording's %d lines or entries hold %d requests (%.1f%%, below %.0f%%: %d skipped)",
		total, r.Requests, 100*float64(r.Requests)/float64(total), MinShare*100, r.Malformed)
}

// CapacityStep measures the capacity search's rate r as a replay of o's
// recording at speed r / rec.Rate(), looped. Each step replays whole
// passes — as many as come closest to the step's duration, at least one
// — so that its arrivals are the recording's own mix and bursts, and
// exactly passes × rec.Requests are scheduled in its window (the window
// ends half a mean gap before the next pass would start). The warm-up
// replays the recording from its start at the same speed, its result
// discarded (0: capacity.DefaultWarmup, as the search records it). base
// are the engine options of every step (timeout, graceful stop);
// serverPID, if > 0, is sampled over each window.
func CapacityStep(o Options, rec Recording, base load.Options, warmup time.Duration, serverPID int) capacity.StepFunc {
	o.Loop, o.Record, o.DryRun = true, nil, false
	if warmup == 0 {
		warmup = capacity.DefaultWarmup
	}
	run := func(ctx context.Context, speed float64, conc int, d time.Duration) (*results.Load, error) {
		so := o
		so.Speed = speed
		sc, err := New(so)
		if err != nil {
			return nil, err
		}
		defer sc.Close()
		lo := base
		lo.Open, lo.Rate, lo.Stages, lo.Requests, lo.StartTarget = true, 0, nil, 0, 0
		lo.Pacer, lo.Concurrency, lo.Duration = sc.Pacer(), conc, d
		lo.Progress, lo.Barrier = nil, nil
		return load.Run(ctx, lo, sc)
	}
	return func(ctx context.Context, rate float64, conc int, d time.Duration) (capacity.Measurement, error) {
		speed := rate / rec.Rate()
		_, window := rec.stepWindow(speed, d)
		if warmup > 0 {
			if _, err := run(ctx, speed, conc, warmup); err != nil {
				return capacity.Measurement{}, fmt.Errorf("warm-up: %w", err)
			}
		}
		var before measure.ProcSample
		if serverPID > 0 {
			s, err := measure.SampleProc(serverPID)
			if err != nil {
				return capacity.Measurement{}, fmt.Errorf("server CPU: %w", err)
			}
			before = s
		}
		res, err := run(ctx, speed, conc, window)
		if err != nil {
			return capacity.Measurement{}, err
		}
		m := capacity.Measurement{Load: res}
		if serverPID > 0 {
			after, err := measure.SampleProc(serverPID)
			if err != nil {
				return capacity.Measurement{}, fmt.Errorf("server CPU: %w", err)
			}
			m.ServerCPU = after.CPU() - before.CPU()
		}
		return m, nil
	}
}

// stepWindow is a step's measured window at speed for a step of about d:
// whole passes (the nearest count to d, at least one), ending half a
// mean gap before the next pass would start, so that passes × Requests
// arrivals are scheduled in it and rate × window rounds up to as many.
func (r Recording) stepWindow(speed float64, d time.Duration) (passes int64, window time.Duration) {
	p := max(1, math.Round(float64(d)/(float64(r.Period)/speed)))
	gap := float64(r.Period) / float64(r.Requests)
	return int64(p), time.Duration((p*float64(r.Period) - gap/2) / speed)
}
