package results

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
//
// In open loop the segments also share one arrival schedule: segment i
// sends arrivals i−1, i−1+n, i−1+2n, … of the whole run's schedule (see
// load's segmentPacer), so n segments started at one instant (Options.StartAt,
// a Barrier) send exactly the single run's requests at exactly its
// intended times, interleaved — not n copies of a slower schedule that
// would all fire at t=0. A bounded open-loop run's requests are split the
// same way (segment i gets the arrivals ≡ i−1 mod n below q).
type Segment struct {
	I int `json:"i,omitempty"`
	N int `json:"n,omitempty"`
}

// IndexEnv is the variable a Kubernetes Indexed Job sets to the pod's
// completion index, 0-based: "auto/n" reads the segment from it.
const IndexEnv = "JOB_COMPLETION_INDEX"

// ParseSegment reads "i/n" with 1 ≤ i ≤ n.
func ParseSegment(s string) (Segment, error) { return ParseSegmentEnv(s, nil) }

// ParseSegmentEnv reads "i/n", or "auto/n", which takes i from the
// environment: i = $JOB_COMPLETION_INDEX + 1 (getenv is os.Getenv outside
// tests; nil refuses "auto").
func ParseSegmentEnv(s string, getenv func(string) string) (Segment, error) {
	a, b, ok := strings.Cut(s, "/")
	if a == "auto" && ok {
		n, err := strconv.Atoi(b)
		if err != nil || n < 1 {
			return Segment{}, fmt.Errorf("%w: segment %q: want auto/n with n ≥ 1", ErrOptions, s)
		}
		v := ""
		if getenv != nil {
			v = getenv(IndexEnv)
		}
		if v == "" {
			return Segment{}, fmt.Errorf("%w: segment %q: %s is not set (a Kubernetes Indexed Job sets it; elsewhere give i/n)", ErrOptions, s, IndexEnv)
		}
		idx, err := strconv.Atoi(v)
		if err != nil || idx < 0 || idx >= n {
			return Segment{}, fmt.Errorf("%w: segment %q: %s=%q is not an index in 0..%d", ErrOptions, s, IndexEnv, v, n-1)
		}
		return Segment{I: idx + 1, N: n}, nil
	}
	i, err1 := strconv.Atoi(a)
	n, err2 := strconv.Atoi(b)
	seg := Segment{I: i, N: n}
	if !ok || err1 != nil || err2 != nil {
		return seg, fmt.Errorf("%w: segment %q is not i/n", ErrOptions, s)
	}
	return seg, seg.Validate()
}

func (s Segment) String() string {
	if s.N == 0 {
		return "1/1"
	}
	return fmt.Sprintf("%d/%d", s.I, s.N)
}

// Validate checks 1 ≤ i ≤ n (the zero Segment, the whole run, is valid).
func (s Segment) Validate() error {
	if s == (Segment{}) {
		return nil
	}
	if s.N < 1 || s.I < 1 || s.I > s.N {
		return fmt.Errorf("%w: segment %d/%d needs 1 ≤ i ≤ n", ErrOptions, s.I, s.N)
	}
	return nil
}

// Share splits an integral quantity q (VUs, requests, connections) by the
// rule above.
func (s Segment) Share(q int64) int64 {
	if s.N <= 1 {
		return q
	}
	return q*int64(s.I)/int64(s.N) - q*int64(s.I-1)/int64(s.N)
}

// stripe is the number of arrivals k < q with k ≡ i−1 (mod n): the
// segment's share of a bounded open-loop run. The stripes add up to q.
func (s Segment) stripe(q int64) int64 {
	if s.N <= 1 {
		return q
	}
	if first := int64(s.I - 1); q > first {
		return (q-first-1)/int64(s.N) + 1
	}
	return 0
}

// fshare splits a fractional quantity.
func (s Segment) fshare(q float64) float64 {
	if s.N <= 1 {
		return q
	}
	return q / float64(s.N)
}

// Apply scales o to the segment's share.
func (s Segment) Apply(o Options) Options {
	if s.N <= 1 {
		return o
	}
	if o.OpenLoop() {
		o.Requests = s.stripe(o.Requests) // the arrivals segmentPacer gives it
	} else {
		o.Requests = s.Share(o.Requests) // 0 of a bounded run is caught by withDefaults
	}
	o.Rate = s.fshare(o.Rate)
	st := make([]Stage, len(o.Stages))
	for i, g := range o.Stages {
		st[i] = g
		if o.OpenLoop() {
			st[i].Target = s.fshare(g.Target)
		} else {
			st[i].Target = float64(s.Share(int64(math.Round(g.Target))))
		}
	}
	o.Stages = st
	if o.OpenLoop() {
		o.StartTarget = s.fshare(o.StartTarget)
	} else {
		o.StartTarget = float64(s.Share(int64(math.Round(o.StartTarget))))
	}
	o.Concurrency = int(s.Share(int64(o.Concurrency)))
	return o
}
