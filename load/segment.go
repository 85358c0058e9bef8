package load

import (
	"time"

	"github.com/wirebench/wirebench/results"
)

// segmentPacer is segment I of N's share of a whole run's schedule: its
// j-th request is the whole run's arrival (I−1)+j·N, at that arrival's
// intended time. The N segments' schedules are disjoint and their union
// is the whole schedule, for any Pacer (constant or ramping).
type segmentPacer struct {
	whole Pacer
	seg   results.Segment
}

// Due implements Pacer.
func (p segmentPacer) Due(hit uint64) (time.Duration, bool) {
	return p.whole.Due(uint64(p.seg.I-1) + hit*uint64(p.seg.N))
}

// test returns the whole test's options of which o, filled from opts, is
// a segment's share: opts with defaults and without the share.
func (o Options) test(opts Options) (Options, error) {
	if o.Segment.N <= 1 {
		return o, nil
	}
	opts.Segment = results.Segment{}
	return opts.withDefaults()
}

// pacer is the open-loop schedule of o.
func (o Options) pacer() Pacer {
	var p Pacer = ConstantPacer{Rate: o.Rate}
	if len(o.Stages) > 0 {
		p = RampPacer{Start: o.StartTarget, Stages: o.Stages}
	}
	if o.Arrivals == results.Poisson {
		return NewPoissonPacer(p, o.Seed)
	}
	return p
}
