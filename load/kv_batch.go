package load

import (
	"context"
	"time"
)

// BatchVU is a VU that performs several operations per exchange: RESP
// pipelining (-P), as redis-benchmark does it — Depth commands written
// at once, then Depth replies read. A scenario whose Driver is Batches
// makes only BatchVUs.
type BatchVU interface {
	VU
	// Depth is the most operations per exchange (1: no pipelining).
	Depth() int
	// DoBatch performs len(outs) operations in one exchange and fills
	// one outcome per operation.
	DoBatch(ctx context.Context, outs []Outcome)
}

// workBatch is work for a pipelining VU in closed loop: the Batches
// driver (pickDriver). A VU of depth 1, or an open-loop run, goes through
// work one operation at a time.
//
// Each operation of a batch is a request in the result, with the batch's
// time as its latency: from the write of the batch to the last reply.
// (redis-benchmark records for every reply of a pipeline the time to the
// batch's first reply; ours is the longer, honest figure for a caller
// that must wait for its whole batch.) With -n the batch is cut so that
// exactly -n operations are sent.
func (r *runner) workBatch(issue, hard context.Context, id int, b BatchVU) {
	timer := time.NewTimer(time.Hour)
	timer.Stop()
	defer timer.Stop()
	ramp := len(r.o.Stages) > 0
	p := b.Depth()
	outs := make([]Outcome, p)
	for issue.Err() == nil {
		if ramp && !r.waitActive(issue, timer, id) {
			return
		}
		n := p
		if r.o.Requests > 0 {
			k := r.hits.Add(uint64(p)) - uint64(p)
			if k >= uint64(r.o.Requests) {
				return
			}
			n = int(min(uint64(p), uint64(r.o.Requests)-k))
		}
		batch := outs[:n]
		for i := range batch {
			batch[i].reset()
		}
		t0 := time.Now()
		b.DoBatch(hard, batch)
		lat := time.Since(t0)
		if anyFailed(batch) && ended(hard) {
			r.stats.interrupted(id, int64(n), false) // cut by the end of the run: not the server's doing
			return
		}
		for i := range batch {
			r.stats.record(id, &batch[i], t0, lat, lat, 0, 0, false, true)
		}
	}
}

func anyFailed(outs []Outcome) bool {
	for i := range outs {
		if outs[i].Fail != "" {
			return true
		}
	}
	return false
}
