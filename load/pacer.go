package load

import (
	"math"
	"sync"
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
func (p ConstantPacer) Due(hit uint64) (time.Duration, bool) { return p.at(float64(hit)) }

// at is when the cumulative arrivals reach x (the inverse of rate × t).
func (p ConstantPacer) at(x float64) (time.Duration, bool) {
	if p.Rate <= 0 {
		return 0, true
	}
	return time.Duration(x / p.Rate * float64(time.Second)), false
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
func (p RampPacer) Due(hit uint64) (time.Duration, bool) { return p.at(float64(hit)) }

// at is when the integral of the rate reaches x.
func (p RampPacer) at(x float64) (time.Duration, bool) {
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

// DefaultSeed seeds Poisson arrivals when no seed is given, so that two
// runs (two cells of a study, a step and its confirmation) send the same
// schedule unless asked otherwise.
const DefaultSeed = 1

// PoissonPacer makes an open loop's arrivals a Poisson process of the
// rate Of schedules (constant or ramping): the gaps between arrivals are
// exponential, of mean 1/rate and coefficient of variation 1, as the
// requests of many independent users are, instead of Of's even spacing.
// Arrival k is due when Of's cumulative arrivals reach S_k, the sum of k
// unit exponentials (a time change, which also makes a ramp a
// non-homogeneous Poisson process). The gaps are drawn from Seed by
// counter (gap i is a function of Seed and i alone), so the schedule is
// the same for the same seed whichever worker asks for which arrival,
// and a segment's stripe is its share of the whole test's schedule.
//
// It is safe for concurrent use: Due walks a shared cursor under a
// mutex; workers ask in nearly increasing order, each call one step.
type PoissonPacer struct {
	of   arrivalsInverse
	seed uint64

	mu     sync.Mutex
	next   uint64    // the cursor: S_next is sum
	sum    float64   // S_next
	checks []float64 // S at every multiple of checkEvery, to go back cheaply
}

// arrivalsInverse is when a schedule's cumulative arrivals reach x.
type arrivalsInverse interface {
	at(x float64) (time.Duration, bool)
}

// checkEvery is how often the cursor keeps a checkpoint: going back to
// an earlier arrival costs at most this many steps (8 bytes kept per
// checkEvery arrivals).
const checkEvery = 1024

// NewPoissonPacer returns Poisson arrivals at the rate of of, which must
// be a ConstantPacer or a RampPacer.
func NewPoissonPacer(of Pacer, seed uint64) *PoissonPacer {
	inv, ok := of.(arrivalsInverse)
	if !ok {
		panic("load: NewPoissonPacer of a pacer without a rate")
	}
	return &PoissonPacer{of: inv, seed: seed, checks: []float64{0}}
}

// Due implements Pacer.
func (p *PoissonPacer) Due(hit uint64) (time.Duration, bool) {
	p.mu.Lock()
	if hit < p.next { // asked late: restart from the checkpoint below it
		c := hit / checkEvery
		p.next, p.sum = c*checkEvery, p.checks[c]
	}
	for p.next < hit {
		p.sum += p.gap(p.next)
		p.next++
		if p.next%checkEvery == 0 && p.next/checkEvery == uint64(len(p.checks)) {
			p.checks = append(p.checks, p.sum)
		}
	}
	x := p.sum
	p.mu.Unlock()
	return p.of.at(x)
}

// gap is the i-th unit exponential: -ln(1-U) for U uniform in [0, 1)
// from SplitMix64 of (seed, i).
func (p *PoissonPacer) gap(i uint64) float64 {
	z := p.seed*0x9e3779b97f4a7c15 + (i+1)*0xbf58476d1ce4e5b9
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9
	z = (z ^ (z >> 27)) * 0x94d049bb133111eb
	z ^= z >> 31
	u := float64(z>>11) / (1 << 53) // [0, 1)
	return -math.Log1p(-u)
}

// scheduled counts the arrivals p holds before d (at most limit, if > 0):
// what a run at p was asked to send in its window. Due is monotone, so an
// exponential then a binary search finds the first arrival at or past d.
func scheduled(p Pacer, d time.Duration, limit uint64) int64 {
	in := func(k uint64) bool {
		at, stop := p.Due(k)
		return !stop && at < d && (limit == 0 || k < limit)
	}
	if !in(0) {
		return 0
	}
	lo, hi := uint64(0), uint64(1) // in(lo), and hi the first probe past it
	for in(hi) {
		lo, hi = hi, 2*hi
	}
	for hi-lo > 1 {
		if m := lo + (hi-lo)/2; in(m) {
			lo = m
		} else {
			hi = m
		}
	}
	return int64(lo + 1)
}
