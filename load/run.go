package load

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"google.golang.org/grpc/codes"

	"github.com/wirebench/wirebench/measure"
	"github.com/wirebench/wirebench/results"
)

// Run drives sc with opts until the request count or duration is reached
// or ctx ends, and returns what it measured. Failed requests are in the
// result; Run returns an error only when the run could not start.
func Run(ctx context.Context, opts Options, sc Scenario) (*results.Load, error) {
	o, err := opts.withDefaults()
	if err != nil {
		return nil, err
	}
	test, err := o.test(opts)
	if err != nil {
		return nil, err
	}
	ops := sc.Ops()
	r := &runner{o: o, sc: sc, nops: len(ops)}
	if o.OpenLoop() {
		r.pacer = test.pacer() // the whole test's schedule, of which…
		if o.Pacer != nil {
			r.pacer = o.Pacer
		}
		if o.Segment.N > 1 {
			r.pacer = segmentPacer{whole: r.pacer, seg: o.Segment} // …a segment sends its stripe
		}
	}
	vus := make([]VU, o.Concurrency)
	r.wire = make([]measure.Bytes, o.Concurrency)
	r.stats = newStats(o.Concurrency, len(ops), o.slowest())
	defer r.stats.release()
	for i := range vus {
		// A signal during start-up ends it: thousands of VUs (dials,
		// histograms) take long enough to start that a run must be
		// stoppable before its first request.
		if err := ctx.Err(); err != nil {
			closeVUs(vus[:i])
			return nil, fmt.Errorf("load: starting VU %d of %d: %w", i+1, len(vus), context.Cause(ctx))
		}
		if vus[i], err = sc.NewVU(ctx, i, &r.wire[i]); err != nil {
			closeVUs(vus[:i])
			return nil, fmt.Errorf("load: VU %d: %w", i, err)
		}
	}

	// issue ends when no more requests may start; hard cuts the ones in
	// flight GracefulStop later.
	// Both count from the run's start, so the measured window is -d.
	if r.start, err = waitStart(ctx, &r.o); err != nil {
		closeVUs(vus)
		return nil, err
	}
	u0, s0 := measure.SelfCPU()
	r.cpu0 = [2]time.Duration{u0, s0}
	a0, b0 := heapAllocs()
	issue, hard := ctx, ctx
	var cancelIssue, cancelHard context.CancelFunc = func() {}, func() {}
	if o.Duration > 0 {
		issue, cancelIssue = context.WithDeadline(ctx, r.start.Add(o.Duration))
		hard, cancelHard = context.WithDeadline(ctx, r.start.Add(o.Duration+o.GracefulStop))
	}
	defer cancelIssue()
	issue, stopIssue := context.WithCancelCause(issue)
	defer stopIssue(nil)
	r.stats.watch = &deadTarget{start: r.start, stop: stopIssue}
	defer cancelHard()

	stopLive := r.startLive()
	switch pickDriver(&o, sc) {
	case EventLoops:
		r.runLoops(issue, hard, sc.(*Raw)) // only raw mode names EventLoops
	case Batches:
		r.eachVU(vus, func(i int) { r.workBatch(issue, hard, i, vus[i].(BatchVU)) })
	default:
		r.eachVU(vus, func(i int) { r.work(issue, hard, i, vus[i]) })
	}
	end := time.Now()
	u1, s1 := measure.SelfCPU()
	a1, b1 := heapAllocs()
	stopLive()
	closeVUs(vus)

	res := r.result(ops)
	res.Scenario = sc.Name()
	res.Start, res.End, res.Window = r.start, end, end.Sub(r.start)
	if o.Segment.N >= 1 { // run as a segment, if only 1/1: mergeable as one test
		test.StartAt = r.o.StartAt
		res.Test = &test.Options
	}
	if o.Duration > 0 && o.Duration < res.Window {
		res.Window = o.Duration // the graceful stop is not part of the window
	}
	var retried int64
	r.stats.sh.Each(func(st *shard) { retried += st.retried })
	if retried > 0 {
		res.Warnings = append(res.Warnings, fmt.Sprintf("%d requests were sent again on a new connection: the server closed an idle keep-alive connection as they were sent (not counted as failures)", retried))
	}
	if r.pacer != nil && o.Duration > 0 && o.Pacer == nil {
		res.Scheduled = scheduled(r.pacer, o.Duration, uint64(o.Requests))
	}
	res.CPU = results.CPU{User: u1 - u0, System: s1 - s0, CPUs: len(measure.Affinity()), Allocs: a1 - a0, AllocBytes: b1 - b0}
	fillHistograms(res, o.OpenLoop())
	res.Exemplars = r.exemplars(ops)
	sc.Finish(res)
	res.Causes = results.FailureCauses(res.Failures)
	var dead *DeadTargetError
	if errors.As(context.Cause(issue), &dead) {
		res.Stop = &results.Stop{Cause: dead.Error()}
		res.Warnings = append(res.Warnings, dead.Error())
	}
	res.Warnings = append(res.Warnings, results.Diagnose(res)...)
	return res, nil
}

// eachVU runs work(i) for every VU in a goroutine of its own and waits
// for them all.
func (r *runner) eachVU(vus []VU, work func(i int)) {
	var wg sync.WaitGroup
	for i := range vus {
		wg.Add(1)
		go func() {
			defer wg.Done()
			work(i)
		}()
	}
	wg.Wait()
}

func closeVUs(vus []VU) {
	for _, v := range vus {
		if v != nil {
			_ = v.Close() // a failed cleanup is not the run's failure
		}
	}
}

type runner struct {
	o     Options
	sc    Scenario
	nops  int
	pacer Pacer
	start time.Time
	hits  atomic.Uint64 // requests claimed (open loop, or closed loop with -n)
	wire  []measure.Bytes
	stats *stats
	cpu0  [2]time.Duration // the client's CPU at the start, for snapshots
}

// claim takes the next request number, or reports that -n is reached.
func (r *runner) claim() (uint64, bool) {
	k := r.hits.Add(1) - 1
	return k, r.o.Requests == 0 || k < uint64(r.o.Requests)
}

// wholeHit is request k of this run as a request of the whole test: the
// same unless the run is a segment (segmentPacer's stripe).
func (r *runner) wholeHit(k uint64) uint64 {
	if n := r.o.Segment.N; n > 1 {
		return uint64(r.o.Segment.I-1) + k*uint64(n)
	}
	return k
}

// work is one worker's loop. The clock is read three times per request:
// at the actual send, at the end, and (open loop) the intended time comes
// from the pacer, so latency = end − intended, service = end − send,
// lag = send − intended.
func (r *runner) work(issue, hard context.Context, id int, vu VU) {
	var o Outcome
	timer := time.NewTimer(time.Hour)
	timer.Stop()
	defer timer.Stop()
	var sl *sleeper
	if r.pacer != nil {
		sl = newSleeper(issue)
		defer sl.close()
	}
	ramp := !r.o.OpenLoop() && len(r.o.Stages) > 0
	// more: the last operation's iteration continues (Outcome.More). An
	// iteration under way at the end of -d finishes in the graceful stop,
	// as k6's do: only new iterations stop at its end.
	var more bool
	var iterDue, iterSent time.Time // the iteration's first operation's due and send times
	defer func() {
		if more { // the run ended between two steps of an iteration
			r.stats.interrupted(id, 0, true)
		}
	}()
	for {
		end := issue
		if more {
			end = hard
		}
		if end.Err() != nil {
			return
		}
		var intended, free time.Time
		var hit uint64
		if o.Wait > 0 && !sleepUntil(end, timer, time.Now().Add(o.Wait)) {
			return // the run ended in the pause: nothing was sent
		}
		switch {
		case more: // the iteration's next operation: due now, not paced
		case r.pacer != nil:
			k, ok := r.claim()
			hit = r.wholeHit(k)
			if !ok {
				return
			}
			at, stop := r.pacer.Due(k)
			if stop || (r.o.Duration > 0 && at >= r.o.Duration) {
				return
			}
			intended = r.start.Add(at)
			// free: when this worker was free for the arrival — before it
			// was due, or after (the arrival waited for a worker).
			free = time.Now()
			// An arrival a worker reaches only after -d is not sent (nor,
			// yet, counted as dropped, as k6 counts dropped_iterations):
			// sending the backlog in the graceful stop would overstate an
			// overloaded server's rate.
			if !sl.until(issue, intended) {
				return
			}
		default:
			if ramp && !r.waitActive(issue, timer, id) {
				return
			}
			if r.o.Requests > 0 {
				if _, ok := r.claim(); !ok {
					return
				}
			}
		}
		o.reset()
		o.Hit = hit
		t0 := time.Now()
		vu.Do(hard, &o)
		t1 := time.Now()
		if o.Fail != "" && ended(hard) {
			r.stats.interrupted(id, 1, o.Iteration) // cut by the end of the run: not the server's doing
			more = false
			return
		}
		if intended.IsZero() {
			intended = t0
		}
		if !more {
			iterDue, iterSent = intended, t0
		}
		// A continuing operation had no schedule of its own: its lag is
		// not the pacer's, and is not recorded.
		r.stats.record(id, &o, intended, t1.Sub(intended), t1.Sub(t0), t0.Sub(intended), t0.Sub(later(intended, free)), r.pacer != nil, !more)
		if o.Iteration && !o.More {
			r.stats.iteration(id, o.Fail != "", t1.Sub(iterDue), t1.Sub(iterSent), r.pacer != nil)
		}
		more = o.More
	}
}

// later is the later of a and b.
func later(a, b time.Time) time.Time {
	if b.After(a) {
		return b
	}
	return a
}

// sleepUntil waits for t; false if ctx ended first.
func sleepUntil(ctx context.Context, timer *time.Timer, t time.Time) bool {
	d := time.Until(t)
	if d <= 0 {
		return true
	}
	timer.Reset(d)
	select {
	case <-ctx.Done():
		timer.Stop()
		return false
	case <-timer.C:
		return true
	}
}

// waitActive blocks while VU id is beyond the ramp's current target
// (k6's ramping-vus: VU i runs while i < target). False if the ramp or
// ctx ended.
func (r *runner) waitActive(ctx context.Context, timer *time.Timer, id int) bool {
	for {
		v, done := stageValue(r.o.StartTarget, r.o.Stages, time.Since(r.start))
		if done {
			return false
		}
		if float64(id) < math.Floor(v+1e-9) {
			return true
		}
		if !sleepUntil(ctx, timer, time.Now().Add(5*time.Millisecond)) {
			return false
		}
	}
}

// ended reports whether the run's hard end has come. By the clock too:
// on a busy machine the context's timer can fire late while a call has
// already failed for the same deadline (a gRPC server's own grpc-timeout
// timer answered DEADLINE_EXCEEDED first), and that call was cut by the
// end of the run, not failed by the server (CI, 2026-11-30: one such
// "timeout" in 2,818 calls).
func ended(hard context.Context) bool {
	if hard.Err() != nil {
		return true
	}
	d, ok := hard.Deadline()
	return ok && !time.Now().Before(d)
}

// result merges the shards of the run's stats.
func (r *runner) result(names []string) *results.Load {
	res := newResult(r.o.Options, names)
	r.stats.sh.Each(func(st *shard) { addShard(res, st) })
	r.addWire(res)
	return res
}

// fillHistograms fills the histograms the workers do not record: in
// closed loop service time is the latency, and a single operation's
// histograms are the totals.
func fillHistograms(res *results.Load, open bool) {
	if !open {
		res.Service.Merge(res.Latency)
		for i := range res.Ops {
			res.Ops[i].Service.Merge(res.Ops[i].Latency)
		}
	}
	if len(res.Ops) == 1 {
		res.Ops[0].Latency.Merge(res.Latency)
		res.Ops[0].Service.Merge(res.Service)
	}
	if it := res.Iterations; it != nil && !open {
		it.Service.Merge(it.Latency)
	}
}

func newResult(o results.Options, names []string) *results.Load {
	res := &results.Load{
		Schema: results.LoadSchema, Options: o,
		Latency: measure.NewHistogram(), Service: measure.NewHistogram(), Lag: measure.NewHistogram(),
		ClientLag: measure.NewHistogram(),
		Status:    map[string]int64{}, Failures: map[string]int64{},
	}
	res.Ops = make([]results.Op, len(names))
	for i, n := range names {
		res.Ops[i] = results.Op{Name: n, Latency: measure.NewHistogram(), Service: measure.NewHistogram()}
	}
	return res
}

// addShard adds one shard of the stats to res.
func addShard(res *results.Load, st *shard) {
	res.Latency.Merge(st.lat)
	res.Service.Merge(st.svc)
	res.Lag.Merge(st.lag)
	res.ClientLag.Merge(st.own)
	for j := range st.ops {
		res.Ops[j].Requests += st.ops[j].count
		res.Ops[j].Failed += st.ops[j].failed
		if st.ops[j].lat != nil {
			res.Ops[j].Latency.Merge(st.ops[j].lat)
			res.Ops[j].Service.Merge(st.ops[j].svc)
		}
	}
	for s, n := range st.status {
		if n > 0 {
			res.Status[statusKey(s)] += n
		}
	}
	for f, n := range st.fails {
		res.Failures[f] += n
		res.Failed += n
	}
	if it := st.iters; it != nil {
		if res.Iterations == nil {
			res.Iterations = &results.Iterations{Latency: measure.NewHistogram(), Service: measure.NewHistogram()}
		}
		res.Iterations.Count += it.count
		res.Iterations.Failed += it.failed
		res.Iterations.Interrupted += it.interrupted
		if it.lat != nil {
			res.Iterations.Latency.Merge(it.lat)
			res.Iterations.Service.Merge(it.svc)
		}
	}
	res.Requests += st.requests
	res.Interrupted += st.interrupted
	res.Bytes.BodyIn += st.bodyIn
	res.Bytes.BodyOut += st.bodyOut
}

// addWire adds the VUs' wire bytes to res.
func (r *runner) addWire(res *results.Load) {
	for i := range r.wire {
		res.Bytes.WireIn += r.wire[i].In.Load()
		res.Bytes.WireOut += r.wire[i].Out.Load()
	}
}

// statusKey names a status in results: the HTTP code, "grpc <Code>", or
// "none" when no response arrived.
func statusKey(s int) string {
	switch {
	case s == 0:
		return "none"
	case s >= 1000:
		return "grpc " + codes.Code(s-1000).String()
	}
	return strconv.Itoa(s)
}
