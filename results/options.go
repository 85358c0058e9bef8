package results

import (
	"errors"
	"fmt"
	"time"
)

// ErrOptions reports invalid load options (a segment, a stage, a
// duration); load.ErrOptions is the same error. Its text names the
// domain, "load", as the command line prints it.
var ErrOptions = errors.New("load: invalid options")

// Options are a load run's options as its result records them: what was
// asked (the load engine fills the defaults and applies the segment share
// before it writes them). The engine's own options (load.Options) are
// these plus its hooks, which are not data. The zero value is a
// closed-loop run of 10 VUs for 10 seconds.
type Options struct {
	// Concurrency is the number of workers: VUs (and HTTP/1.1
	// connections) in closed loop, the cap on requests in flight in open
	// loop. Default 10; with closed-loop Stages, the largest target.
	Concurrency int `json:"concurrency"`
	// Requests bounds the run to exactly this many requests (0: no bound).
	Requests int64 `json:"requests,omitempty"`
	// Duration bounds the run in time. If neither Requests nor Duration
	// nor Stages is set, Duration is 10 s.
	Duration time.Duration `json:"duration,omitempty"`
	// Rate > 0 makes the run open loop at Rate requests per second.
	Rate float64 `json:"rate,omitempty"`
	// Open makes Stages ramp the arrival rate instead of the VUs.
	Open bool `json:"open,omitempty"`
	// Arrivals is an open loop's arrival process at Rate or along Stages:
	// Uniform (evenly spaced) or Poisson (exponential gaps drawn from
	// Seed). Empty in closed loop, in a replay (its own schedule) and in
	// results written before it existed, which were all Uniform.
	Arrivals Arrivals `json:"arrivals,omitempty"`
	Seed     uint64   `json:"seed,omitempty"`
	// Stages ramp the VUs (closed loop) or the rate (open loop) from
	// StartTarget (k6: startVUs / startRate).
	Stages      []Stage `json:"stages,omitempty"`
	StartTarget float64 `json:"start_target,omitempty"`
	// Timeout bounds each request (default 10 s).
	Timeout time.Duration `json:"timeout"`
	// GracefulStop lets requests in flight when Duration ends finish
	// (default 2 s); after it they are cut and counted as interrupted.
	GracefulStop time.Duration `json:"graceful_stop"`
	// Segment runs a share of the load (see Segment).
	Segment Segment `json:"segment"`
	// StartAt, if set, is when the schedule starts: the engine connects
	// its VUs, then waits for it, so that the segments of one test run one
	// shared schedule (load/start.go; load.Options.Barrier decides it at
	// run time).
	StartAt time.Time `json:"start_at,omitzero"`
	// EventLoop runs raw mode over lean HTTP/1.1 in closed loop on
	// wrk-style event loops (load/h1): the cheapest client per request,
	// for measuring servers in other processes. A loop holds its P while it
	// waits for the network, so goroutines of the same process (an
	// in-process server, say) may wait up to 5 ms to run: leave it off then.
	// Ignored where it does not apply (other scenarios, open loop, ramps).
	EventLoop bool `json:"event_loop,omitempty"`
}

// OpenLoop reports whether the run is open loop.
func (o *Options) OpenLoop() bool { return o.Rate > 0 || o.Open }

// Stage is one leg of a ramp, with k6's meaning: over Duration the target
// (VUs in closed loop, requests per second in open loop) moves linearly
// from the previous stage's target (the start value for the first stage)
// to Target.
type Stage struct {
	Duration time.Duration `json:"duration"`
	Target   float64       `json:"target"`
}

// Arrivals names an open loop's arrival process.
type Arrivals string

// The arrival processes.
const (
	// Uniform spaces arrivals evenly, 1/rate apart: a metronome.
	Uniform Arrivals = "uniform"
	// Poisson draws exponential gaps of mean 1/rate (coefficient of
	// variation 1) from a seed: arrivals as independent users make
	// them, in bursts and lulls, the same schedule for the same seed.
	Poisson Arrivals = "poisson"
)

// ArrivalsText names an arrival process for people: "poisson arrivals
// (seed 1)", "uniform arrivals", or "" for none recorded.
func ArrivalsText(a Arrivals, seed uint64) string {
	switch a {
	case "":
		return ""
	case Poisson:
		return fmt.Sprintf("poisson arrivals (seed %d)", seed)
	}
	return string(a) + " arrivals"
}

// ParseArrivals reads "uniform" or "poisson".
func ParseArrivals(s string) (Arrivals, error) {
	switch a := Arrivals(s); a {
	case Uniform, Poisson:
		return a, nil
	}
	return "", fmt.Errorf("arrivals %q: want uniform or poisson", s)
}
