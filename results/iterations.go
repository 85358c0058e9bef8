package results

import (
	"fmt"

	"github.com/wirebench/wirebench/measure"
)

// Iterations are the whole passes of a run whose operations form
// iterations (a flow's steps, load/flow): the unit an open loop paces and
// -n counts. The run's requests, latency and ops stay per request (per
// step); these are per iteration.
type Iterations struct {
	Count  int64 `json:"count"`  // iterations ended: every step done, or one failed
	Failed int64 `json:"failed"` // of which a step failed (its reason is in Failures)
	// Interrupted iterations were cut by the end of the run with a step
	// in flight; not in Count.
	Interrupted int64 `json:"interrupted,omitempty"`
	// Latency is from the iteration's scheduled start in open loop (its
	// first send in closed loop) to its last step's end, think time
	// between steps included; Service from its first send.
	Latency *measure.Histogram `json:"latency"`
	Service *measure.Histogram `json:"service"`
}

// IPS is iterations completed per second of the measured window.
func (r *Load) IPS() float64 {
	if r.Iterations == nil {
		return 0
	}
	if s := r.Measured().Seconds(); s > 0 {
		return float64(r.Iterations.Count) / s
	}
	return 0
}

// Paced is what the run's schedule counts: its iterations, when its
// operations form them, else its requests; and those cut at the end.
func (r *Load) Paced() (done, interrupted int64) {
	if it := r.Iterations; it != nil {
		return it.Count, it.Interrupted
	}
	return r.Requests, r.Interrupted
}

// mergeIterations sums the segments' iteration sections: all have one
// or none has.
func mergeIterations(rs []*Load) (*Iterations, error) {
	first := rs[0].Iterations
	for i, r := range rs {
		if (r.Iterations == nil) != (first == nil) {
			return nil, fmt.Errorf("%w: of results 1 and %d, one has an iterations section and the other none", ErrLoad, i+1)
		}
	}
	if first == nil {
		return nil, nil
	}
	m := &Iterations{Latency: measure.NewHistogram(), Service: measure.NewHistogram()}
	for _, r := range rs {
		it := r.Iterations
		m.Count += it.Count
		m.Failed += it.Failed
		m.Interrupted += it.Interrupted
		if it.Latency != nil {
			m.Latency.Merge(it.Latency)
		}
		if it.Service != nil {
			m.Service.Merge(it.Service)
		}
	}
	return m, nil
}
