package capacity

import (
	"math"

	"github.com/wirebench/wirebench/results"
)

// search is the rate search, apart from any measurement: it proposes the
// next rate and is told how the step went. It grows the rate by Growth
// from StartRate while steps pass (or shrinks it while they fail), then
// bisects, geometrically, between the highest passing rate (lo) and the
// lowest rate that failed or at which the client could not keep up,
// until they are within Precision of each other.
//
// Invariant: lo < upper() whenever both are known — a step is only ever
// proposed between them, so a noisy, non-monotonic server cannot make the
// interval cross. For a 1–100k req/s range, start 100, growth 4 and 5%
// precision it takes at most 11 steps (search_test.go checks every case).
type search struct {
	min, max, start, growth, precision float64

	lo     float64   // highest rate that passed (0: none)
	passed []float64 // every rate that passed, for withdraw
	hi     float64   // lowest rate the server failed (0: none)
	client float64   // lowest rate at which the client did not keep up (0: none)
}

// upper is the lowest rate known not to pass: failed by the server or
// not judged because the client was the limit (0: none).
func (s *search) upper() float64 {
	switch {
	case s.hi == 0:
		return s.client
	case s.client == 0:
		return s.hi
	}
	return math.Min(s.hi, s.client)
}

// next is the next rate to measure, or done and why the search stopped.
func (s *search) next() (rate float64, done bool, limit string) {
	up := s.upper()
	switch {
	case s.lo == 0 && up == 0:
		return s.start, false, ""
	case s.lo == 0: // nothing passed yet: go down
		if up <= s.min {
			if s.hi > 0 && s.hi <= up {
				return 0, true, results.LimitMinRate
			}
			return 0, true, results.LimitClient
		}
		return math.Max(s.min, up/s.growth), false, ""
	case up == 0: // everything passed: go up
		if s.lo >= s.max {
			return 0, true, results.LimitMaxRate
		}
		return math.Min(s.max, s.lo*s.growth), false, ""
	case up/s.lo <= 1+s.precision+1e-9:
		if s.hi > 0 && s.hi == up {
			return 0, true, results.LimitSLO
		}
		return 0, true, results.LimitClient
	}
	return math.Sqrt(s.lo * up), false, ""
}

// record files one step's verdict at rate.
func (s *search) record(rate float64, verdict string) {
	switch verdict {
	case results.StepPass:
		s.lo = math.Max(s.lo, rate)
		s.passed = append(s.passed, rate)
	case results.StepFail:
		if s.hi == 0 || rate < s.hi {
			s.hi = rate
		}
	default:
		if s.client == 0 || rate < s.client {
			s.client = rate
		}
	}
}

// withdraw takes back a passing rate that failed when confirmed: it is
// the lowest failing rate now, and the highest other rate that passed
// below it the highest passing one, so that next bisects between them.
func (s *search) withdraw(rate float64) {
	if s.hi == 0 || rate < s.hi {
		s.hi = rate
	}
	s.lo = 0
	for _, p := range s.passed {
		if p < rate {
			s.lo = math.Max(s.lo, p)
		}
	}
}
