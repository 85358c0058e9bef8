package results

import (
	"testing"
	"time"

	"github.com/wirebench/wirebench/measure"
)

// openSegment is segment i of n of an open-loop run: rate req/s from
// start for dur, each request recording lag, service and latency values.
func openSegment(i, n int, rate float64, start time.Time, dur time.Duration, lag, service []time.Duration) *Load {
	r := emptyResult(Segment{i, n})
	r.Scenario = "crud"
	r.Options.Rate, r.Options.Concurrency, r.Options.Duration = rate, 10, dur
	r.Start, r.End = start, start.Add(dur)
	r.Ops = []Op{
		{Name: "list users", Latency: measure.NewHistogram(), Service: measure.NewHistogram()},
		{Name: "get user", Latency: measure.NewHistogram(), Service: measure.NewHistogram()},
	}
	for k, l := range lag {
		s := service[k]
		r.Lag.Record(l)
		r.Service.Record(s)
		r.Latency.Record(l + s)
		op := &r.Ops[k%2]
		op.Requests++
		op.Service.Record(s)
		op.Latency.Record(l + s)
		r.Requests++
	}
	r.Bytes = Bytes{WireIn: 1000, WireOut: 100, BodyIn: 800, BodyOut: 50}
	r.CPU = CPU{User: time.Second, System: time.Millisecond, CPUs: 1}
	return r
}

// TestMergeOpenLoopSegments: merging the segments of an open-loop run
// keeps what makes it open loop — the schedule lag, the service time apart
// from the latency, per operation too — and the run as a whole: the span
// from the first start to the last end, the summed rate and concurrency,
// in whatever order the segments come.
func TestMergeOpenLoopSegments(t *testing.T) {
	t0 := time.Date(2026, 11, 23, 12, 0, 0, 0, time.UTC)
	ms := time.Millisecond
	a := openSegment(1, 2, 100, t0, 10*time.Second,
		[]time.Duration{1 * ms, 2 * ms, 3 * ms, 4 * ms}, []time.Duration{10 * ms, 20 * ms, 30 * ms, 40 * ms})
	b := openSegment(2, 2, 150, t0.Add(500*ms), 10*time.Second, // started later, ended later
		[]time.Duration{100 * ms, 200 * ms}, []time.Duration{50 * ms, 60 * ms})
	for _, order := range [][]*Load{{a, b}, {b, a}} {
		m, err := Merge(order...)
		if err != nil {
			t.Fatal(err)
		}
		if !m.Start.Equal(t0) || !m.End.Equal(t0.Add(10500*ms)) {
			t.Errorf("span %v..%v, want %v..%v", m.Start, m.End, t0, t0.Add(10500*ms))
		}
		if m.Options.Rate != 250 || m.Options.Concurrency != 20 || m.Options.Segment != (Segment{}) {
			t.Errorf("options %+v: want rate 250, concurrency 20, no segment", m.Options)
		}
		if m.Requests != 6 || m.Lag.Count() != 6 || m.Service.Count() != 6 || m.Latency.Count() != 6 {
			t.Errorf("requests %d lag %d service %d latency %d, want 6 each", m.Requests, m.Lag.Count(), m.Service.Count(), m.Latency.Count())
		}
		if m.Lag.Max() < 199*ms || m.Lag.Min() > 1*ms || m.Service.Max() < 59*ms {
			t.Errorf("lag %v..%v, service max %v: the segments' values are lost", m.Lag.Min(), m.Lag.Max(), m.Service.Max())
		}
		// per operation: a's requests alternate list/get, b's too
		wantOps := []struct {
			n          int64
			serviceMax time.Duration
		}{{3, 50 * ms}, {3, 60 * ms}}
		for i, w := range wantOps {
			op := m.Ops[i]
			if op.Requests != w.n || op.Service.Count() != w.n || op.Latency.Count() != w.n {
				t.Errorf("op %s: %d requests, %d service, %d latency values; want %d", op.Name, op.Requests, op.Service.Count(), op.Latency.Count(), w.n)
			}
			if d := op.Service.Max() - w.serviceMax; d < -ms/10 || d > ms/10 {
				t.Errorf("op %s: service max %v, want %v", op.Name, op.Service.Max(), w.serviceMax)
			}
		}
		if m.Bytes != (Bytes{WireIn: 2000, WireOut: 200, BodyIn: 1600, BodyOut: 100}) {
			t.Errorf("bytes %+v", m.Bytes)
		}
		if m.CPU != (CPU{User: 2 * time.Second, System: 2 * ms, CPUs: 2}) {
			t.Errorf("cpu %+v", m.CPU)
		}
		if len(m.Segments) != 2 {
			t.Errorf("segments %v", m.Segments)
		}
	}
}
