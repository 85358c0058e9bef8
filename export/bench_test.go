package export

import (
	"testing"
	"time"

	"github.com/wirebench/wirebench/measure"
	"github.com/wirebench/wirebench/results"
)

// BenchmarkBatch is what one live push costs the load process beyond
// the engine's snapshot: converting a result (one operation, its HDR
// histogram full of spread latencies, 10 slowest and bucket exemplars)
// into a remote-write request and encoding it. Its cost is paid once per
// --export-interval, not per request: at 50k req/s and the default 10 s,
// divide it by 500,000 for the cost per request.
func BenchmarkBatch(b *testing.B) {
	h := measure.NewHistogram()
	for i := range 200_000 {
		h.Record(time.Duration(50+i%20_000) * time.Microsecond * time.Duration(1+i%7))
	}
	t0 := time.Now()
	ex := &results.Exemplars{}
	for i := range 40 {
		ex.Buckets = append(ex.Buckets, results.Exemplar{TraceID: NewRunID() + NewRunID(), Op: "GET", Start: t0.Add(time.Duration(i) * time.Millisecond), Latency: time.Millisecond})
	}
	ex.Slowest = ex.Buckets[:10]
	l := &results.Load{Start: t0, End: t0.Add(10 * time.Second), Ops: []results.Op{{Name: "GET", Requests: h.Count(), Latency: h}},
		Status: map[string]int64{"200": h.Count()}, Exemplars: ex}
	rw, err := NewRemoteWrite("http://127.0.0.1:1/api/v1/write")
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		batch := &Batch{At: l.End, Start: l.Start, Labels: []Label{{"run", "x"}}, metrics: collect(l, 0)}
		req, late := rw.request(batch)
		_ = req.marshal(nil)
		_ = late.marshal(nil)
		clear(rw.sent) // every push sends its exemplars, as the first does
		clear(rw.known)
	}
}
