package load

import (
	"time"

	"github.com/wirebench/wirebench/measure"
	"github.com/wirebench/wirebench/results"
)

// Progress is the state of a run so far, for a live status line.
type Progress struct {
	Elapsed  time.Duration
	Requests int64
	Failed   int64
	RPS      float64 // over the last interval
	P50, P99 time.Duration
}

// startLive calls Options.Progress once a second, and Options.Snapshot
// every SnapshotEvery, until stop is called. It reads the stats' shards
// one at a time under their locks and merges them into a scratch
// histogram, or a snapshot's result.
func (r *runner) startLive() (stop func()) {
	if !r.o.live() {
		return func() {}
	}
	every := r.o.SnapshotEvery
	if every <= 0 {
		every = DefaultSnapshotEvery
	}
	nextSnap := r.start.Add(every)
	done := make(chan struct{})
	finished := make(chan struct{})
	go func() {
		defer close(finished)
		tick := time.NewTicker(time.Second)
		defer tick.Stop()
		h := measure.NewHistogram()
		var last int64
		lastAt := r.start
		for {
			select {
			case <-done:
				return
			case now := <-tick.C:
				if r.o.Snapshot != nil && !now.Before(nextSnap) {
					r.o.Snapshot(r.snapshot(now))
					for !nextSnap.After(now) {
						nextSnap = nextSnap.Add(every)
					}
				}
				if r.o.Progress == nil {
					continue
				}
				h.Reset()
				var p Progress
				r.stats.sh.Each(func(st *shard) {
					h.Merge(st.lat)
					p.Requests += st.requests
					for _, n := range st.fails {
						p.Failed += n
					}
				})
				p.Elapsed = now.Sub(r.start)
				p.RPS = float64(p.Requests-last) / now.Sub(lastAt).Seconds()
				last, lastAt = p.Requests, now
				p.P50, p.P99 = h.Quantile(0.5), h.Quantile(0.99)
				r.o.Progress(p)
			}
		}
	}()
	return func() { close(done); <-finished }
}

// DefaultSnapshotEvery is how often Options.Snapshot is called by default.
const DefaultSnapshotEvery = 10 * time.Second

// snapshot is the run so far as a result: counts, histograms, bytes
// and the client's CPU since the start, and the exemplars kept so far.
// The stats' shards are read under their locks, one at a time.
func (r *runner) snapshot(now time.Time) *results.Load {
	ops := r.sc.Ops()
	res := newResult(r.o.Options, ops)
	sets := make([]*results.Exemplars, 0, r.stats.sh.Len())
	r.stats.sh.Each(func(st *shard) {
		addShard(res, st)
		sets = append(sets, st.keep.exemplars(ops))
	})
	r.addWire(res)
	fillHistograms(res, r.o.OpenLoop())
	res.Exemplars = results.MergeExemplars(r.o.slowest(), sets...)
	res.Scenario = r.sc.Name()
	res.Start, res.End, res.Window = r.start, now, now.Sub(r.start)
	u, s := measure.SelfCPU()
	res.CPU = results.CPU{User: u - r.cpu0[0], System: s - r.cpu0[1], CPUs: len(measure.Affinity())}
	return res
}
