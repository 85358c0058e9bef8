package load

import (
	"runtime/metrics"
	"sync"
	"sync/atomic"
	"time"

	"github.com/wirebench/wirebench/measure"
)

// stats is a run's record, sharded by what runs in parallel
// (measure.ShardCount: twice the CPUs, at most 16), not by worker: an
// open-loop step can need thousands of workers, and a full set of
// histograms each (136 KiB per histogram, per operation and per measure)
// took gigabytes. A worker records into its home shard, or the next free
// one (measure.Shards); the shards are merged when read, exactly.
//
// What a run's statistics hold is therefore bounded by
// shards × (4 + 2 × operations) histograms, whatever the workers.
type stats struct {
	sh    *measure.Shards[shard]
	nops  int
	watch *deadTarget // failures.go; nil watches nothing
}

// shard is one part of the record; only touched under its lock.
type shard struct {
	lat, svc, lag *measure.Histogram
	own           *measure.Histogram // the part of lag the client caused (Load.ClientLag)
	ops           []opStats
	status        [maxStatus]int64 // HTTP statuses and GRPCStatus codes; an array, not a map, on the hot path
	fails         map[string]int64
	requests      int64
	bodyIn        int64
	bodyOut       int64
	interrupted   int64
	retried       int64   // requests sent again after a keep-alive connection closed under them
	keep          *keeper // the slowest requests and a few per bucket (exemplars.go); nil keeps none
	multi         bool    // several ops: each keeps its own histograms, made on first use
	iters         *iterStats
}

// iterStats are a shard's iterations (Outcome.Iteration), made on first
// use: most runs have none.
type iterStats struct {
	count, failed, interrupted int64
	lat, svc                   *measure.Histogram
}

// maxStatus bounds Outcome.Status: HTTP codes < 1000, gRPC codes 1000..1016.
const maxStatus = 1100

type opStats struct {
	count, failed int64
	lat, svc      *measure.Histogram
}

// newStats returns the record of a run of workers workers over nops
// operations, keeping the slowest requests (0: none).
func newStats(workers, nops, slowest int) *stats {
	init := func(s *shard) {
		s.lat, s.svc, s.lag, s.own = spareHistogram(), spareHistogram(), spareHistogram(), spareHistogram()
		s.ops, s.fails = make([]opStats, nops), map[string]int64{}
		// With one operation its histograms are the totals: record them
		// once. With several, an op's histograms are made when the shard
		// first records it: a replay has up to 65 ops, most of them rare.
		s.multi = nops > 1
		if slowest > 0 {
			s.keep = newKeeper(slowest)
		}
	}
	return &stats{sh: measure.NewShards(measure.ShardCount(workers), init), nops: nops}
}

// record adds one outcome, from a worker whose home shard is home.
// start is when the request was due (latency counts from it).
// paced is false for an iteration's continuing operation, which has no
// schedule lag of its own. own is the part of lag the client caused: its
// timer and scheduling, from when a worker was free (the rest is the wait
// for a free worker, which a slow server causes).
func (s *stats) record(home int, o *Outcome, start time.Time, lat, svc, lag, own time.Duration, open, paced bool) {
	s.watch.note(o)
	i := s.sh.Lock(home)
	s.sh.At(i).record(o, start, lat, svc, lag, own, open, paced)
	s.sh.Unlock(i)
}

func (st *shard) record(o *Outcome, start time.Time, lat, svc, lag, own time.Duration, open, paced bool) {
	st.keep.keep(o, start, lat)
	st.lat.Record(lat)
	if open { // in closed loop service time is the latency: Run copies it
		st.svc.Record(svc)
		if paced {
			st.lag.Record(lag)
			st.own.Record(own)
		}
	}
	if o.Op >= 0 && o.Op < len(st.ops) {
		op := &st.ops[o.Op]
		op.count++
		if st.multi && op.lat == nil { // on first use: a shard may never see a rare op
			op.lat, op.svc = spareHistogram(), spareHistogram()
		}
		if op.lat != nil {
			op.lat.Record(lat)
			if open {
				op.svc.Record(svc)
			}
		}
		if o.Fail != "" {
			op.failed++
		}
	}
	if o.Status >= 0 && o.Status < maxStatus {
		st.status[o.Status]++
	}
	if o.Fail != "" {
		st.fails[o.Fail]++
	}
	st.bodyIn += int64(o.BodyIn)
	st.bodyOut += int64(o.BodyOut)
	st.requests++
}

// interrupted counts n requests cut by the end of the run, and their
// iteration with them when iter is set.
func (s *stats) interrupted(home int, n int64, iter bool) {
	i := s.sh.Lock(home)
	st := s.sh.At(i)
	st.interrupted += n
	if iter {
		st.iterStats().interrupted++
	}
	s.sh.Unlock(i)
}

// iteration records an iteration's end: whether a step failed, its
// latency from its first operation's due time and from its first send.
func (s *stats) iteration(home int, failed bool, lat, svc time.Duration, open bool) {
	i := s.sh.Lock(home)
	it := s.sh.At(i).iterStats()
	it.count++
	if failed {
		it.failed++
	}
	if it.lat == nil {
		it.lat, it.svc = spareHistogram(), spareHistogram()
	}
	it.lat.Record(lat)
	if open { // in closed loop service time is the latency: Run copies it
		it.svc.Record(svc)
	}
	s.sh.Unlock(i)
}

func (st *shard) iterStats() *iterStats {
	if st.iters == nil {
		st.iters = &iterStats{}
	}
	return st.iters
}

// retried counts a request sent again on a new connection.
func (s *stats) retried(home int) {
	i := s.sh.Lock(home)
	s.sh.At(i).retried++
	s.sh.Unlock(i)
}

// fail counts a failure that is no request's (the event loop's own).
func (s *stats) fail(home int, reason string) {
	i := s.sh.Lock(home)
	s.sh.At(i).fails[reason]++
	s.sh.Unlock(i)
}

// release returns the shards' histograms for the next run to reuse; s
// must not be used after.
func (s *stats) release() {
	s.sh.Each(func(st *shard) {
		putSpare(st.lat, st.svc, st.lag, st.own)
		for _, op := range st.ops {
			putSpare(op.lat, op.svc)
		}
		if st.iters != nil {
			putSpare(st.iters.lat, st.iters.svc)
		}
		*st = shard{}
	})
}

// spare holds the histograms of finished runs for the next run: a
// capacity search's steps, its warm-ups and a study's trials reuse the
// same ones rather than allocating a set each (each 136 KiB, which the
// garbage collector would only return later). Bounded: a run beyond it
// allocates, and what it returns beyond it is dropped. A histogram is
// emptied when it is reused, not when it is returned: clearing writes
// all of its 136 KiB, most of it never touched by the run (pages the
// kernel has not even mapped yet), and a one-run process such as
// `wirebench load` would pay that (~1 ms of CPU at exit) for nothing.
var spare struct {
	sync.Mutex
	h    []*measure.Histogram
	made atomic.Int64 // histograms allocated for statistics, for tests of the bound
}

const maxSpare = 4 * measure.MaxShards * (4 + 2*5) // the shards of a few five-operation runs

func spareHistogram() *measure.Histogram {
	spare.Lock()
	if n := len(spare.h); n > 0 {
		h := spare.h[n-1]
		spare.h = spare.h[:n-1]
		spare.Unlock()
		h.Reset()
		return h
	}
	spare.Unlock()
	spare.made.Add(1)
	return measure.NewHistogram()
}

func putSpare(hs ...*measure.Histogram) {
	spare.Lock()
	defer spare.Unlock()
	for _, h := range hs {
		if h != nil && len(spare.h) < maxSpare {
			spare.h = append(spare.h, h)
		}
	}
}

// heapAllocs reads the process's cumulative heap allocations (objects and
// bytes) from runtime/metrics, which needs no stop-the-world.
func heapAllocs() (objects, bytes int64) {
	s := []metrics.Sample{{Name: "/gc/heap/allocs:objects"}, {Name: "/gc/heap/allocs:bytes"}}
	metrics.Read(s)
	if s[0].Value.Kind() != metrics.KindUint64 || s[1].Value.Kind() != metrics.KindUint64 {
		return 0, 0
	}
	return int64(s[0].Value.Uint64()), int64(s[1].Value.Uint64())
}
