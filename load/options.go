package load

import (
	"fmt"
	"math"
	"time"

	"github.com/wirebench/wirebench/results"
)

// Limits of a run's options, checked by Run (and, with their own names
// and lines, by the CLI and study files; docs/limits.md). Each is well
// beyond a useful run from one machine, and bounds what a run allocates
// before it sends anything: a VU's own state is small (its connection
// and buffers; the histograms are per shard of the stats, not per VU,
// stats.go), but MaxConcurrency VUs is still as many sockets.
const (
	MaxConcurrency  = 10_000            // VUs, or requests in flight in open loop
	MaxConnections  = MaxConcurrency    // shared HTTP/2 and gRPC connections
	MaxRequests     = 1_000_000_000_000 // -n
	MaxRate         = 10_000_000        // requests per second, and open-loop stage targets
	MaxDuration     = 7 * 24 * time.Hour
	MaxTimeout      = time.Hour // per request
	MaxGracefulStop = time.Hour
)

// Options configure a run: the options its result records
// (results.Options: VUs, requests, duration, rate, stages, segment…) and
// two hooks, which are not data and are not written. The zero value is a
// closed-loop run of 10 VUs for 10 seconds.
type Options struct {
	results.Options
	// Barrier, if set, decides Options.StartAt at run time (start.go).
	Barrier Barrier `json:"-"`
	// Progress, if set, is called about once per second with the run so
	// far, from a goroutine of its own.
	Progress func(Progress) `json:"-"`
	// Snapshot, if set, is called every SnapshotEvery (default 10 s) with
	// the run so far, from a goroutine of its own, for live export: a
	// result of its own to keep (cumulative counts and histograms, CPU,
	// exemplars). It must not block for long: the next waits for it.
	Snapshot      func(*results.Load) `json:"-"`
	SnapshotEvery time.Duration       `json:"-"`
	// Slowest is how many of the slowest requests the run keeps by name
	// (Load.Exemplars): 0 for DefaultSlowest, < 0 for none (no exemplars).
	Slowest int `json:"-"`
	// Pacer, if set, is the open-loop schedule itself (a replay's
	// recorded times) in place of Rate or Stages; Open must be set. Each
	// request's Outcome.Hit tells the VU which of the schedule's requests
	// it is sending.
	Pacer Pacer `json:"-"`
}

// live reports whether a reporter reads the workers' stats during the run.
func (o *Options) live() bool { return o.Progress != nil || o.Snapshot != nil }

// slowest is how many slowest requests each worker keeps (0: no exemplars).
func (o *Options) slowest() int {
	switch {
	case o.Slowest < 0:
		return 0
	case o.Slowest == 0:
		return DefaultSlowest
	}
	return min(o.Slowest, results.MaxSlowest)
}

// withDefaults validates o, fills defaults and applies the segment share.
func (o Options) withDefaults() (Options, error) {
	if o.Concurrency < 0 || o.Requests < 0 || o.Duration < 0 || o.Rate < 0 || o.Timeout < 0 {
		return o, fmt.Errorf("%w: negative value", ErrOptions)
	}
	if o.Open && o.Rate == 0 && len(o.Stages) == 0 && o.Pacer == nil {
		return o, fmt.Errorf("%w: open loop needs a rate or stages", ErrOptions)
	}
	if o.Pacer != nil && (!o.Open || o.Rate != 0 || len(o.Stages) != 0) {
		return o, fmt.Errorf("%w: an explicit pacer needs open loop without a rate or stages", ErrOptions)
	}
	if err := o.checkLimits(); err != nil {
		return o, err
	}
	switch {
	case o.Arrivals != "" && o.Arrivals != results.Uniform && o.Arrivals != results.Poisson:
		return o, fmt.Errorf("%w: arrivals %q: want uniform or poisson", ErrOptions, o.Arrivals)
	case !o.OpenLoop() || o.Pacer != nil: // closed loop, or a schedule of its own
		o.Arrivals, o.Seed = "", 0
	case o.Arrivals == "":
		o.Arrivals = results.Uniform
	}
	if o.Arrivals == results.Uniform {
		o.Seed = 0
	} else if o.Arrivals == results.Poisson && o.Seed == 0 {
		o.Seed = DefaultSeed
	}
	if err := o.Segment.Validate(); err != nil {
		return o, err
	}
	if o.Timeout == 0 {
		o.Timeout = 10 * time.Second
	}
	if o.GracefulStop == 0 {
		o.GracefulStop = 2 * time.Second
	}
	if o.Requests == 0 && o.Duration == 0 && len(o.Stages) == 0 {
		o.Duration = 10 * time.Second
	}
	if len(o.Stages) > 0 {
		if d := stagesDuration(o.Stages); o.Duration == 0 || d < o.Duration {
			o.Duration = d
		}
	}
	if o.Concurrency == 0 {
		o.Concurrency = 10
		if len(o.Stages) > 0 && !o.OpenLoop() {
			o.Concurrency = int(math.Ceil(stagesMax(o.StartTarget, o.Stages)))
		}
	}
	if o.Concurrency > MaxConcurrency { // a closed-loop ramp's largest target
		return o, fmt.Errorf("%w: concurrency %d: want 1..%d", ErrOptions, o.Concurrency, MaxConcurrency)
	}
	bounded := o.Requests > 0
	o.Options = o.Segment.Apply(o.Options)
	if bounded && o.Requests == 0 {
		return o, fmt.Errorf("%w: segment %s gets no requests", ErrOptions, o.Segment)
	}
	if o.Concurrency == 0 {
		return o, fmt.Errorf("%w: segment %s gets no VUs", ErrOptions, o.Segment)
	}
	return o, nil
}

// checkLimits refuses options beyond the limits above (a NaN or infinite
// rate too), before anything is allocated for them.
func (o Options) checkLimits() error {
	switch {
	case o.Concurrency > MaxConcurrency:
		return fmt.Errorf("%w: concurrency %d: want 1..%d", ErrOptions, o.Concurrency, MaxConcurrency)
	case o.Requests > MaxRequests:
		return fmt.Errorf("%w: requests %d: want at most %d", ErrOptions, o.Requests, int64(MaxRequests))
	case math.IsNaN(o.Rate) || o.Rate > MaxRate:
		return fmt.Errorf("%w: rate %g: want at most %d/s", ErrOptions, o.Rate, MaxRate)
	case o.Duration > MaxDuration:
		return fmt.Errorf("%w: duration %v: want at most %v", ErrOptions, o.Duration, MaxDuration)
	case o.Timeout > MaxTimeout:
		return fmt.Errorf("%w: timeout %v: want at most %v", ErrOptions, o.Timeout, MaxTimeout)
	case o.GracefulStop < 0 || o.GracefulStop > MaxGracefulStop:
		return fmt.Errorf("%w: graceful stop %v: want 0..%v", ErrOptions, o.GracefulStop, MaxGracefulStop)
	case o.Slowest > results.MaxSlowest:
		return fmt.Errorf("%w: slowest %d: want at most %d", ErrOptions, o.Slowest, results.MaxSlowest)
	case o.SnapshotEvery < 0:
		return fmt.Errorf("%w: snapshot interval %v: want > 0", ErrOptions, o.SnapshotEvery)
	case math.IsNaN(o.StartTarget) || o.StartTarget < 0 || o.StartTarget > MaxRate:
		return fmt.Errorf("%w: start target %g: want 0..%d", ErrOptions, o.StartTarget, MaxRate)
	}
	var total time.Duration
	for i, st := range o.Stages {
		if st.Duration < 0 || st.Duration > MaxDuration || math.IsNaN(st.Target) || st.Target < 0 || st.Target > MaxRate {
			return fmt.Errorf("%w: stage %d (%v:%g): want a duration 0..%v and a target 0..%d", ErrOptions, i+1, st.Duration, st.Target, MaxDuration, MaxRate)
		}
		if total += st.Duration; total > MaxDuration {
			return fmt.Errorf("%w: stages: %v in all, want at most %v", ErrOptions, total, MaxDuration)
		}
	}
	return nil
}
