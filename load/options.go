package load

import (
	"fmt"
	"math"
	"time"

	"github.com/wirebench/wirebench/results"
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
}

// withDefaults validates o, fills defaults and applies the segment share.
func (o Options) withDefaults() (Options, error) {
	if o.Concurrency < 0 || o.Requests < 0 || o.Duration < 0 || o.Rate < 0 || o.Timeout < 0 {
		return o, fmt.Errorf("%w: negative value", ErrOptions)
	}
	if o.Open && o.Rate == 0 && len(o.Stages) == 0 {
		return o, fmt.Errorf("%w: open loop needs a rate or stages", ErrOptions)
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
