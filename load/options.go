package load

import (
	"fmt"
	"math"
	"time"
)

// Options configure a run. The zero value is a closed-loop run of 10 VUs
// for 10 seconds.
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
	// StartAt, if set, is when the schedule starts: Run connects its VUs,
	// then waits for it, so that the segments of one test run one shared
	// schedule (start.go). Barrier, if set, decides it at run time.
	StartAt time.Time `json:"start_at,omitzero"`
	Barrier Barrier   `json:"-"`
	// EventLoop runs raw mode over lean HTTP/1.1 in closed loop on
	// wrk-style event loops (h1loop.go): the cheapest client per request,
	// for measuring servers in other processes. A loop holds its P while it
	// waits for the network, so goroutines of the same process (an
	// in-process server, say) may wait up to 5 ms to run: leave it off then.
	// Ignored where it does not apply (other scenarios, open loop, ramps).
	EventLoop bool `json:"event_loop,omitempty"`

	// Progress, if set, is called about once per second with the run so
	// far, from a goroutine of its own.
	Progress func(Progress) `json:"-"`
}

// open reports whether the run is open loop.
func (o *Options) open() bool { return o.Rate > 0 || o.Open }

// withDefaults validates o, fills defaults and applies the segment share.
func (o Options) withDefaults() (Options, error) {
	if o.Concurrency < 0 || o.Requests < 0 || o.Duration < 0 || o.Rate < 0 || o.Timeout < 0 {
		return o, fmt.Errorf("%w: negative value", ErrOptions)
	}
	if o.Open && o.Rate == 0 && len(o.Stages) == 0 {
		return o, fmt.Errorf("%w: open loop needs a rate or stages", ErrOptions)
	}
	if err := o.Segment.validate(); err != nil {
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
		if len(o.Stages) > 0 && !o.open() {
			o.Concurrency = int(math.Ceil(stagesMax(o.StartTarget, o.Stages)))
		}
	}
	bounded := o.Requests > 0
	o = o.Segment.apply(o)
	if bounded && o.Requests == 0 {
		return o, fmt.Errorf("%w: segment %s gets no requests", ErrOptions, o.Segment)
	}
	if o.Concurrency == 0 {
		return o, fmt.Errorf("%w: segment %s gets no VUs", ErrOptions, o.Segment)
	}
	return o, nil
}
