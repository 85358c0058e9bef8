package export

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"testing"
	"time"

	"github.com/klauspost/compress/snappy"
	"github.com/prometheus/prometheus/model/histogram"
	"github.com/prometheus/prometheus/prompb"

	"github.com/wirebench/wirebench/measure"
	"github.com/wirebench/wirebench/results"
)

// TestExemplarsInOneMillisecondAllGo: Prometheus keeps an exemplar only
// if it is newer than the series' newest, to the millisecond. Two slow
// requests that ended in the same millisecond must both be sent (the
// second was dropped before, and with it the run's slowest request), and
// one sent before is not sent again.
func TestExemplarsInOneMillisecondAllGo(t *testing.T) {
	rw, err := NewRemoteWrite("http://127.0.0.1:1/api/v1/write")
	if err != nil {
		t.Fatal(err)
	}
	t0 := time.UnixMilli(1_700_000_000_000)
	ex := func(id string, endUS int64) results.Exemplar {
		return results.Exemplar{TraceID: id, Start: t0, Latency: time.Duration(endUS) * time.Microsecond}
	}
	first := rw.newExemplars("s", []results.Exemplar{ex("a", 840_185), ex("b", 840_324)})
	if len(first) != 2 {
		t.Fatalf("sent %d exemplars of 2 in one millisecond", len(first))
	}
	if first[0].Timestamp >= first[1].Timestamp {
		t.Errorf("timestamps %d, %d: want increasing", first[0].Timestamp, first[1].Timestamp)
	}
	if first[0].Timestamp != t0.UnixMilli()+840 {
		t.Errorf("first timestamp %d, want the request's end %d", first[0].Timestamp, t0.UnixMilli()+840)
	}
	// Next snapshot: "b" again, and "c" recorded late, older than "b".
	second := rw.newExemplars("s", []results.Exemplar{ex("c", 500_000), ex("b", 840_324)})
	if len(second) != 1 || second[0].Labels[0].Value != "c" {
		t.Fatalf("second send %v: want only c", second)
	}
	if second[0].Timestamp <= first[1].Timestamp {
		t.Errorf("c's timestamp %d is not after b's %d: Prometheus would refuse it", second[0].Timestamp, first[1].Timestamp)
	}
	if got := rw.newExemplars("other", []results.Exemplar{ex("a", 1)}); len(got) != 1 {
		t.Errorf("another series: sent %d, want its own 1", len(got))
	}
}

// TestNativeHistogramSpans: the native histogram has the run's count
// and sum, and its spans and delta-encoded buckets give back each
// bucket's count at the right index.
func TestNativeHistogramSpans(t *testing.T) {
	h := measure.NewHistogram()
	for _, d := range []time.Duration{time.Millisecond, time.Millisecond, 1003 * time.Microsecond, 50 * time.Millisecond} {
		h.Record(d)
	}
	e := toExp(h)
	nh := nativeHistogram(e)
	if nh.Count != 4 || nh.Schema != Schema {
		t.Fatalf("count %d schema %d", nh.Count, nh.Schema)
	}
	var idx int32
	var count, n int64
	got := map[int32]int64{}
	bi := 0
	for si, sp := range nh.PositiveSpans {
		idx += sp.Offset
		if si > 0 && sp.Offset <= 0 {
			t.Errorf("span %d: offset %d, want a gap > 0", si, sp.Offset)
		}
		for range sp.Length {
			count += nh.PositiveBuckets[bi]
			got[idx] = count
			n += count
			idx++
			bi++
		}
	}
	if n != 4 || bi != len(nh.PositiveBuckets) {
		t.Errorf("buckets hold %d of 4 values, %d of %d buckets read", n, bi, len(nh.PositiveBuckets))
	}
	for _, c := range []struct {
		v    time.Duration
		want int64
	}{{time.Millisecond, 2}, {1003 * time.Microsecond, 1}, {50 * time.Millisecond, 1}} {
		k := bucketIndex(c.v.Seconds())
		if got[k] != c.want {
			t.Errorf("bucket of %v (index %d): %d, want %d (%v)", c.v, k, got[k], c.want, got)
		}
		if lo, hi := upper(k-1), upper(k); c.v.Seconds() <= lo || c.v.Seconds() > hi*(1+1e-12) {
			t.Errorf("%v not in its bucket (%g, %g]", c.v, lo, hi)
		}
	}
}

// TestExemplarsOfANewSeriesComeLate: Prometheus adds a series'
// exemplars before its samples and drops those of a series it does not
// have yet, so the first batch sends a histogram's exemplars in a second
// request of their own, and later batches inline.
func TestExemplarsOfANewSeriesComeLate(t *testing.T) {
	var srv []int // exemplars per request, in order
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		raw, _ := io.ReadAll(r.Body)
		body, err := snappy.Decode(nil, raw)
		var req prompb.WriteRequest
		if err == nil {
			err = req.Unmarshal(body)
		}
		if err != nil {
			t.Error(err)
		}
		n := 0
		for _, s := range req.Timeseries {
			n += len(s.Exemplars)
			if len(s.Exemplars) > 0 && len(s.Histograms) == 0 && len(req.Timeseries) != 1 {
				t.Errorf("exemplars alone in a request of %d series", len(req.Timeseries))
			}
		}
		srv = append(srv, n)
		w.WriteHeader(http.StatusNoContent)
	}))
	defer ts.Close()
	rw, err := NewRemoteWrite(ts.URL)
	if err != nil {
		t.Fatal(err)
	}
	t0 := time.Now()
	h := measure.NewHistogram()
	h.Record(time.Millisecond)
	batch := func(id string) *Batch {
		l := &results.Load{Start: t0, End: t0.Add(time.Second), Ops: []results.Op{{Name: "GET", Requests: 1, Latency: h}},
			Exemplars: &results.Exemplars{Slowest: []results.Exemplar{{TraceID: id, Op: "GET", Start: t0, Latency: time.Millisecond}}}}
		return &Batch{At: l.End, metrics: collect(l, 0)}
	}
	for _, id := range []string{"a", "b"} {
		if err := rw.Send(context.Background(), batch(id)); err != nil {
			t.Fatal(err)
		}
	}
	if want := []int{0, 1, 1}; !slices.Equal(srv, want) {
		t.Errorf("exemplars per request %v, want %v (first batch: series, then its exemplars; then inline)", srv, want)
	}
}

// TestRemoteWriteBytesArePrompbs: the requests written field by field
// (rwproto.go) are byte for byte what prompb's generated code marshals
// from the same series — counters (one zero), an empty histogram and one
// with several spans, exemplars inline and late, negative offsets.
func TestRemoteWriteBytesArePrompbs(t *testing.T) {
	h := measure.NewHistogram()
	for _, d := range []time.Duration{time.Microsecond, time.Millisecond, time.Millisecond, 1003 * time.Microsecond, 50 * time.Millisecond, 3 * time.Second} {
		h.Record(d)
	}
	t0 := time.UnixMilli(1_700_000_000_123)
	l := &results.Load{Start: t0, End: t0.Add(time.Second), Requests: h.Count(),
		Ops:      []results.Op{{Name: "GET", Requests: h.Count(), Latency: h}, {Name: "PUT", Latency: measure.NewHistogram()}},
		Failures: map[string]int64{"timeout": 0}, Status: map[string]int64{"200": 6},
		Exemplars: &results.Exemplars{Slowest: []results.Exemplar{{TraceID: "a", Op: "GET", Start: t0, Latency: 3 * time.Second}}}}
	rw, err := NewRemoteWrite("http://127.0.0.1:1/api/v1/write")
	if err != nil {
		t.Fatal(err)
	}
	var spans int
	for i, known := range []bool{false, true} {
		if known {
			rw.known[seriesKey(promLabels(nameDuration, []Label{{"run", "r"}}, []Label{{"op", "GET"}}))] = true
			clear(rw.sent)
		}
		b := &Batch{At: l.End, Labels: []Label{{"run", "r"}}, metrics: collect(l, 3)}
		req, late := rw.request(b)
		for j, r := range []*rwRequest{req, late} {
			want, err := toPrompb(r).Marshal()
			if err != nil {
				t.Fatal(err)
			}
			if got := r.marshal(nil); !slices.Equal(got, want) {
				t.Errorf("batch %d request %d: %d bytes differ from prompb's %d:\n got %x\nwant %x", i, j, len(got), len(want), got, want)
			}
			for _, s := range r.Timeseries {
				for _, h := range s.Histograms {
					spans += len(h.PositiveSpans)
				}
			}
		}
		if n := len(late.Timeseries); n != map[bool]int{false: 1, true: 0}[known] {
			t.Errorf("batch %d: %d late series", i, n)
		}
	}
	if spans < 6 {
		t.Errorf("%d spans in two batches: the histogram should have several", spans)
	}
}

// toPrompb is r as prompb's types, the histograms through
// prompb.FromIntHistogram as the exporter built them before.
func toPrompb(r *rwRequest) *prompb.WriteRequest {
	labels := func(ls []Label) []prompb.Label {
		var out []prompb.Label
		for _, l := range ls {
			out = append(out, prompb.Label{Name: l.Name, Value: l.Value})
		}
		return out
	}
	out := &prompb.WriteRequest{}
	for _, s := range r.Timeseries {
		ts := prompb.TimeSeries{Labels: labels(s.Labels)}
		for _, x := range s.Samples {
			ts.Samples = append(ts.Samples, prompb.Sample{Value: x.Value, Timestamp: x.Timestamp})
		}
		for _, x := range s.Exemplars {
			ts.Exemplars = append(ts.Exemplars, prompb.Exemplar{Labels: labels(x.Labels), Value: x.Value, Timestamp: x.Timestamp})
		}
		for _, x := range s.Histograms {
			h := &histogram.Histogram{Schema: x.Schema, ZeroThreshold: x.ZeroThreshold, Count: x.Count, Sum: x.Sum,
				CounterResetHint: histogram.UnknownCounterReset, PositiveBuckets: x.PositiveBuckets}
			for _, sp := range x.PositiveSpans {
				h.PositiveSpans = append(h.PositiveSpans, histogram.Span{Offset: sp.Offset, Length: sp.Length})
			}
			ts.Histograms = append(ts.Histograms, prompb.FromIntHistogram(x.Timestamp, h))
		}
		out.Timeseries = append(out.Timeseries, ts)
	}
	return out
}
