package load

import (
	"math/bits"
	"time"

	"github.com/wirebench/wirebench/load/traceparent"
	"github.com/wirebench/wirebench/results"
)

// DefaultSlowest is how many of the slowest requests a run keeps by
// default (Options.Slowest).
const DefaultSlowest = 10

// sample is one request kept by name. It holds the Outcome's fields, not
// strings built from them, so that keeping one costs a copy.
type sample struct {
	trace  traceparent.ID
	start  time.Time
	lat    time.Duration
	op     int
	status int
	conn   int
	fail   string
}

// keeper is one worker's exemplars: the n slowest requests (a min-heap on
// latency, so a request faster than the n-th costs one comparison), and
// per latency bucket its slowest and its latest request. One per shard of
// the stats, under its lock; Run merges the shards' once.
type keeper struct {
	n       int
	slow    []sample
	buckets [results.ExemplarBuckets][2]sample // slowest, latest; lat 0 = empty
}

func newKeeper(n int) *keeper {
	return &keeper{n: n, slow: make([]sample, 0, n)}
}

// keep considers one request. It allocates nothing.
func (k *keeper) keep(o *Outcome, start time.Time, lat time.Duration) {
	if k == nil {
		return
	}
	s := sample{trace: o.Trace, start: start, lat: lat, op: o.Op, status: o.Status, conn: o.Conn, fail: o.Fail}
	b := &k.buckets[bits.Len64(uint64(max(lat/time.Microsecond, 0)))]
	if lat > b[0].lat || b[0].start.IsZero() {
		b[0] = s
	}
	b[1] = s
	switch {
	case len(k.slow) < k.n:
		k.slow = append(k.slow, s)
		k.up(len(k.slow) - 1)
	case k.n > 0 && lat > k.slow[0].lat:
		k.slow[0] = s
		k.down(0)
	}
}

func (k *keeper) up(i int) {
	for i > 0 {
		p := (i - 1) / 2
		if k.slow[p].lat <= k.slow[i].lat {
			return
		}
		k.slow[p], k.slow[i] = k.slow[i], k.slow[p]
		i = p
	}
}

func (k *keeper) down(i int) {
	for {
		l, m := 2*i+1, i
		if l < len(k.slow) && k.slow[l].lat < k.slow[m].lat {
			m = l
		}
		if r := l + 1; r < len(k.slow) && k.slow[r].lat < k.slow[m].lat {
			m = r
		}
		if m == i {
			return
		}
		k.slow[m], k.slow[i] = k.slow[i], k.slow[m]
		i = m
	}
}

// exemplars converts what k kept, naming the operations.
func (k *keeper) exemplars(ops []string) *results.Exemplars {
	if k == nil {
		return nil
	}
	e := &results.Exemplars{}
	for _, s := range k.slow {
		e.Slowest = append(e.Slowest, s.exemplar(ops))
	}
	for _, b := range k.buckets {
		for _, s := range b {
			if !s.start.IsZero() {
				e.Buckets = append(e.Buckets, s.exemplar(ops))
			}
		}
	}
	return e
}

func (s sample) exemplar(ops []string) results.Exemplar {
	e := results.Exemplar{TraceID: s.trace.String(), Start: s.start, Latency: s.lat,
		Status: statusKey(s.status), Fail: s.fail, Conn: s.conn}
	if s.op >= 0 && s.op < len(ops) {
		e.Op = ops[s.op]
	}
	return e
}

// exemplars merges the shards' exemplars.
func (r *runner) exemplars(ops []string) *results.Exemplars {
	sets := make([]*results.Exemplars, 0, r.stats.sh.Len())
	r.stats.sh.Each(func(st *shard) { sets = append(sets, st.keep.exemplars(ops)) })
	return results.MergeExemplars(r.o.slowest(), sets...)
}
