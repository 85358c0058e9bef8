package load

import (
	"fmt"
	"math"
	"strconv"
	"strings"
)

// Segment is the i-th of n equal shares of a run's load, for running one
// test from n processes or machines whose results are merged afterwards.
// The zero value is the whole run.
//
// The split rule, as k6's execution segments apply it: the segment covers
// the fraction ((i-1)/n, i/n]. A fractional quantity (a rate, a stage's
// rate target) is multiplied by 1/n. An integral quantity q (VUs,
// requests, a stage's VU target) gets floor(q·i/n) − floor(q·(i−1)/n),
// so the n segments' shares always add up to q exactly.
type Segment struct {
	I int `json:"i,omitempty"`
	N int `json:"n,omitempty"`
}

// ParseSegment reads "i/n" with 1 ≤ i ≤ n.
func ParseSegment(s string) (Segment, error) {
	a, b, ok := strings.Cut(s, "/")
	i, err1 := strconv.Atoi(a)
	n, err2 := strconv.Atoi(b)
	seg := Segment{I: i, N: n}
	if !ok || err1 != nil || err2 != nil {
		return seg, fmt.Errorf("%w: segment %q is not i/n", ErrOptions, s)
	}
	return seg, seg.validate()
}

func (s Segment) String() string {
	if s.N == 0 {
		return "1/1"
	}
	return fmt.Sprintf("%d/%d", s.I, s.N)
}

func (s Segment) validate() error {
	if s == (Segment{}) {
		return nil
	}
	if s.N < 1 || s.I < 1 || s.I > s.N {
		return fmt.Errorf("%w: segment %d/%d needs 1 ≤ i ≤ n", ErrOptions, s.I, s.N)
	}
	return nil
}

// share splits an integral quantity.
func (s Segment) share(q int64) int64 {
	if s.N <= 1 {
		return q
	}
	return q*int64(s.I)/int64(s.N) - q*int64(s.I-1)/int64(s.N)
}

// fshare splits a fractional quantity.
func (s Segment) fshare(q float64) float64 {
	if s.N <= 1 {
		return q
	}
	return q / float64(s.N)
}

// apply scales o to the segment's share.
func (s Segment) apply(o Options) Options {
	if s.N <= 1 {
		return o
	}
	o.Requests = s.share(o.Requests) // 0 of a bounded run is caught by withDefaults
	o.Rate = s.fshare(o.Rate)
	st := make([]Stage, len(o.Stages))
	for i, g := range o.Stages {
		st[i] = g
		if o.open() {
			st[i].Target = s.fshare(g.Target)
		} else {
			st[i].Target = float64(s.share(int64(math.Round(g.Target))))
		}
	}
	o.Stages = st
	if o.open() {
		o.StartTarget = s.fshare(o.StartTarget)
	} else {
		o.StartTarget = float64(s.share(int64(math.Round(o.StartTarget))))
	}
	o.Concurrency = int(s.share(int64(o.Concurrency)))
	return o
}
