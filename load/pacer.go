package load

import (
	"math"
	"time"

	"github.com/wirebench/wirebench/results"
)

// Pacer schedules an open-loop run. Due returns when request number hit
// (0-based) is intended to be sent, as an offset from the start of the
// run, or stop when the schedule has no such request.
//
// vegeta's Pacer returns the wait from now instead; returning the intended
// time is the same information (wait = Due - elapsed) and is what
// coordinated-omission correction needs when the client is already late.
// Implementations must be safe for concurrent use.
type Pacer interface {
	Due(hit uint64) (at time.Duration, stop bool)
}

// Pace adapts a Pacer to vegeta's shape: how long to wait at elapsed
// before the next request, given hits already sent.
func Pace(p Pacer, elapsed time.Duration, hits uint64) (wait time.Duration, stop bool) {
	at, stop := p.Due(hits)
	return at - elapsed, stop
}

// ConstantPacer sends Rate requests per second, evenly spaced, for ever
// (a run's -d or -n bounds it).
type ConstantPacer struct{ Rate float64 }

// Due implements Pacer.
func (p ConstantPacer) Due(hit uint64) (time.Duration, bool) {
	if p.Rate <= 0 {
		return 0, true
	}
	return time.Duration(float64(hit) / p.Rate * float64(time.Second)), false
}

// RampPacer moves the arrival rate linearly through Stages (k6's
// ramping-arrival-rate), starting from Start requests per second. Request
// k is due when the integral of the rate reaches k.
type RampPacer struct {
	Start  float64
	Stages []results.Stage
}

// Due implements Pacer by walking the stages' areas and solving the
// quadratic of the stage in which the k-th arrival falls.
func (p RampPacer) Due(hit uint64) (time.Duration, bool) {
	x := float64(hit) // arrivals still to account for
	var t time.Duration
	a := p.Start
	for _, s := range p.Stages {
		b := s.Target
		D := s.Duration.Seconds()
		area := (a + b) / 2 * D
		if x < area {
			var tau float64
			if slope := (b - a) / D; math.Abs(slope) < 1e-12 {
				tau = x / a
			} else {
				tau = (-a + math.Sqrt(a*a+2*slope*x)) / slope
			}
			return t + time.Duration(tau*float64(time.Second)), false
		}
		x -= area
		t += s.Duration
		a = b
	}
	return 0, true
}
