package export

import (
	"context"
	"encoding/hex"
	"io"
	"math"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	metricspb "go.opentelemetry.io/proto/otlp/metrics/v1"
	"google.golang.org/protobuf/proto"

	"github.com/wirebench/wirebench/measure"
	"github.com/wirebench/wirebench/results"
)

// otlpReceiver decodes what an OTLP/HTTP collector receives on
// /v1/metrics (binary protobuf) and keeps the last request.
func otlpReceiver(t *testing.T, last **metricspb.MetricsData) *httptest.Server {
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/v1/metrics" || r.Header.Get("Content-Type") != "application/x-protobuf" {
			t.Errorf("OTLP request to %s, content type %q", r.URL.Path, r.Header.Get("Content-Type"))
		}
		raw, _ := io.ReadAll(r.Body)
		md := &metricspb.MetricsData{}
		if err := proto.Unmarshal(raw, md); err != nil {
			t.Error(err)
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		*last = md
		w.Header().Set("Content-Type", "application/x-protobuf")
	}))
	t.Cleanup(ts.Close)
	return ts
}

// expQuantile is the quantile q of an OTLP exponential histogram, read
// as a back end reads it (the upper bound of the bucket that holds rank
// q·count), from the bucket formula alone: bucket i is
// (base^i, base^(i+1)], base = 2^(2^−scale).
func expQuantile(p *metricspb.ExponentialHistogramDataPoint, q float64) float64 {
	base := math.Exp2(math.Exp2(-float64(p.Scale)))
	rank := q * float64(p.Count)
	var cum float64
	for j, c := range p.Positive.BucketCounts {
		cum += float64(c)
		if cum >= rank && c > 0 {
			return math.Pow(base, float64(p.Positive.Offset+int32(j)+1))
		}
	}
	return math.NaN()
}

// TestOTLPAgreesWithTheRun: what an OTLP receiver decodes holds the run:
// the requests counter, a cumulative exponential histogram whose count
// is the run's and whose quantiles, read from the bucket formula alone,
// lie within one bucket of the run's, and the slowest requests' trace
// IDs as exemplars.
func TestOTLPAgreesWithTheRun(t *testing.T) {
	h := measure.NewHistogram()
	for i := range 20_000 {
		h.Record(time.Duration(100+i%5000) * time.Microsecond)
	}
	t0 := time.Unix(1_800_000_000, 0)
	slow := results.Exemplar{TraceID: "4bf92f3577b34da6a3ce929d0e0e4736", Op: "GET", Start: t0.Add(time.Second), Latency: h.Max(), Status: "200"}
	l := &results.Load{Start: t0, End: t0.Add(5 * time.Second), Requests: h.Count(),
		Ops:       []results.Op{{Name: "GET", Requests: h.Count(), Latency: h}},
		Exemplars: &results.Exemplars{Slowest: []results.Exemplar{slow}}}

	var got *metricspb.MetricsData
	srv := otlpReceiver(t, &got)
	sink, err := NewOTLP(srv.URL + "/v1/metrics")
	if err != nil {
		t.Fatal(err)
	}
	b := &Batch{At: l.End, Start: l.Start, Labels: []Label{{"run", "r1"}}, metrics: collect(l, 0)}
	if err := sink.Send(context.Background(), b); err != nil {
		t.Fatal(err)
	}
	if got == nil || len(got.ResourceMetrics) != 1 || len(got.ResourceMetrics[0].ScopeMetrics) != 1 {
		t.Fatalf("received %v", got)
	}
	byName := map[string]*metricspb.Metric{}
	for _, m := range got.ResourceMetrics[0].ScopeMetrics[0].Metrics {
		if byName[m.Name] != nil {
			t.Errorf("metric %s twice: one metric per name, one point per label set", m.Name)
		}
		byName[m.Name] = m
	}
	req := byName["wirebench.requests"].GetSum()
	if req == nil || !req.IsMonotonic || req.AggregationTemporality != metricspb.AggregationTemporality_AGGREGATION_TEMPORALITY_CUMULATIVE ||
		len(req.DataPoints) != 1 || req.DataPoints[0].GetAsDouble() != float64(h.Count()) {
		t.Errorf("wirebench.requests: %v, want one cumulative monotonic point of %d", req, h.Count())
	}
	eh := byName["wirebench.request.duration"].GetExponentialHistogram()
	if eh == nil || eh.AggregationTemporality != metricspb.AggregationTemporality_AGGREGATION_TEMPORALITY_CUMULATIVE || len(eh.DataPoints) != 1 {
		t.Fatalf("wirebench.request.duration: %v", byName["wirebench.request.duration"])
	}
	p := eh.DataPoints[0]
	var n uint64
	for _, c := range p.Positive.BucketCounts {
		n += c
	}
	if p.Count != uint64(h.Count()) || n != p.Count || p.ZeroCount != 0 {
		t.Errorf("count %d, buckets hold %d, zero %d; the run %d", p.Count, n, p.ZeroCount, h.Count())
	}
	if p.StartTimeUnixNano != uint64(t0.UnixNano()) || p.TimeUnixNano != uint64(l.End.UnixNano()) {
		t.Errorf("point from %d to %d, want the run's start and the snapshot's time", p.StartTimeUnixNano, p.TimeUnixNano)
	}
	for _, q := range []float64{0.5, 0.9, 0.99, 1} {
		v, want := expQuantile(p, q), h.Quantile(q).Seconds()
		next := h.Quantile(min(q+1/float64(h.Count()), 1)).Seconds()
		t.Logf("p%g: OTLP bucket bound %.6fs, run %.6fs", q*100, v, want)
		if v < want || v > next*(1+MaxQuantileError) {
			t.Errorf("p%g: OTLP %v, the run %v (next %v): not the bucket of the run's value", q*100, v, want, next)
		}
	}
	if len(p.Exemplars) != 1 || hex.EncodeToString(p.Exemplars[0].TraceId) != slow.TraceID ||
		p.Exemplars[0].GetAsDouble() != slow.Latency.Seconds() {
		t.Errorf("exemplars %v, want the slowest request %s", p.Exemplars, slow.TraceID)
	}
	runAttr := false
	for _, a := range p.Attributes {
		runAttr = runAttr || (a.Key == "run" && a.Value.GetStringValue() == "r1")
	}
	if !runAttr {
		t.Errorf("histogram point lacks run=r1: %v", p.Attributes)
	}
}

func TestOTLPURL(t *testing.T) {
	if _, err := NewOTLP("127.0.0.1:4318"); err == nil {
		t.Error("a URL without http://: no error")
	}
}
