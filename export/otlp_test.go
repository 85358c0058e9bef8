package export

import (
	"bytes"
	"context"
	"encoding/hex"
	"io"
	"math"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	commonpb "go.opentelemetry.io/proto/otlp/common/v1"
	metricspb "go.opentelemetry.io/proto/otlp/metrics/v1"
	resourcepb "go.opentelemetry.io/proto/otlp/resource/v1"
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

// TestOTLPBytesAreTheGeneratedCodes: the request written field by field
// is byte for byte what the OTLP module's generated types marshal from
// the same batch (otlpReference, the exporter's code before), and decodes
// to an equal message: counters (zeros among them), a histogram with
// exemplars (one without a W3C trace ID, one that failed), an empty one,
// a batch without a start.
func TestOTLPBytesAreTheGeneratedCodes(t *testing.T) {
	h := measure.NewHistogram()
	for i := range 2_000 {
		h.Record(time.Duration(100+i*i%50_000) * time.Microsecond)
	}
	t0 := time.Unix(1_800_000_000, 123)
	l := &results.Load{Start: t0, End: t0.Add(5 * time.Second), Requests: h.Count(),
		Ops:      []results.Op{{Name: "GET", Requests: h.Count(), Latency: h}, {Name: "PUT", Latency: measure.NewHistogram()}},
		Failures: map[string]int64{"timeout": 0, "reset": 2}, Status: map[string]int64{"200": h.Count()},
		Exemplars: &results.Exemplars{Slowest: []results.Exemplar{
			{TraceID: "4bf92f3577b34da6a3ce929d0e0e4736", Op: "GET", Start: t0, Latency: h.Max(), Status: "200"},
			{TraceID: "not-w3c", Op: "GET", Start: t0, Latency: time.Millisecond, Status: "200"},
			{TraceID: "00f92f3577b34da6a3ce929d0e0e4736", Op: "GET", Start: t0, Latency: 2 * time.Millisecond, Status: "0", Fail: "reset"},
		}}}
	for _, b := range []*Batch{
		{At: l.End, Start: l.Start, Labels: []Label{{"run", "r1"}, {"segment", "1/2"}}, metrics: collect(l, 1)},
		{At: l.End, metrics: collect(l, 0)},
	} {
		ref := otlpReference(b)
		want, err := proto.MarshalOptions{Deterministic: true}.Marshal(ref)
		if err != nil {
			t.Fatal(err)
		}
		got := otlpMetrics(nil, b)
		var back metricspb.MetricsData
		if err := proto.Unmarshal(got, &back); err != nil {
			t.Fatal(err)
		}
		if !proto.Equal(&back, ref) {
			t.Errorf("decoded %v\nwant %v", &back, ref)
		}
		if !bytes.Equal(got, want) {
			t.Errorf("%d bytes differ from the generated code's %d:\n got %x\nwant %x", len(got), len(want), got, want)
		}
	}
}

// otlpReference is the exporter's OTLP request as it was built with the
// generated types (before it was written field by field).
func otlpReference(b *Batch) *metricspb.MetricsData {
	start, at := uint64(b.Start.UnixNano()), uint64(b.At.UnixNano())
	if b.Start.IsZero() {
		start = at
	}
	strAttr := func(k, v string) *commonpb.KeyValue {
		return &commonpb.KeyValue{Key: k, Value: &commonpb.AnyValue{Value: &commonpb.AnyValue_StringValue{StringValue: v}}}
	}
	attrs := func(lists ...[]Label) []*commonpb.KeyValue {
		var as []*commonpb.KeyValue
		for _, ls := range lists {
			for _, l := range ls {
				as = append(as, strAttr(l.Name, l.Value))
			}
		}
		return as
	}
	var ms []*metricspb.Metric
	byName := map[string]*metricspb.Metric{}
	for _, m := range b.metrics {
		om := byName[m.name]
		if om == nil {
			om = &metricspb.Metric{Name: otelName(m.name), Description: m.help, Unit: m.unit}
			byName[m.name] = om
			ms = append(ms, om)
		}
		switch m.kind {
		case histKind:
			h, ok := om.Data.(*metricspb.Metric_ExponentialHistogram)
			if !ok {
				h = &metricspb.Metric_ExponentialHistogram{ExponentialHistogram: &metricspb.ExponentialHistogram{
					AggregationTemporality: metricspb.AggregationTemporality_AGGREGATION_TEMPORALITY_CUMULATIVE}}
				om.Data = h
			}
			e := m.hist
			p := &metricspb.ExponentialHistogramDataPoint{Attributes: attrs(b.Labels, m.labels), StartTimeUnixNano: start, TimeUnixNano: at,
				Count: e.count, Scale: Schema, ZeroThreshold: ZeroThreshold}
			if e.count > 0 {
				p.Sum, p.Min, p.Max = proto.Float64(e.sum), proto.Float64(e.min), proto.Float64(e.max)
				p.Positive = &metricspb.ExponentialHistogramDataPoint_Buckets{Offset: e.offset - 1, BucketCounts: e.counts}
			}
			for _, x := range m.ex {
				id, err := hex.DecodeString(x.TraceID)
				if err != nil || len(id) != 16 {
					continue
				}
				p.Exemplars = append(p.Exemplars, &metricspb.Exemplar{TimeUnixNano: uint64(exemplarTime(x).UnixNano()),
					Value: &metricspb.Exemplar_AsDouble{AsDouble: x.Latency.Seconds()}, TraceId: id,
					FilteredAttributes: attrs(exemplarAttrs(x))})
			}
			h.ExponentialHistogram.DataPoints = append(h.ExponentialHistogram.DataPoints, p)
		default:
			sum, ok := om.Data.(*metricspb.Metric_Sum)
			if !ok {
				sum = &metricspb.Metric_Sum{Sum: &metricspb.Sum{IsMonotonic: true,
					AggregationTemporality: metricspb.AggregationTemporality_AGGREGATION_TEMPORALITY_CUMULATIVE}}
				om.Data = sum
			}
			sum.Sum.DataPoints = append(sum.Sum.DataPoints, &metricspb.NumberDataPoint{Attributes: attrs(b.Labels, m.labels),
				StartTimeUnixNano: start, TimeUnixNano: at, Value: &metricspb.NumberDataPoint_AsDouble{AsDouble: m.value}})
		}
	}
	res := &resourcepb.Resource{Attributes: []*commonpb.KeyValue{strAttr("service.name", "wirebench")}}
	for _, l := range b.Labels {
		if l.Name == "run" {
			res.Attributes = append(res.Attributes, strAttr("service.instance.id", l.Value))
		}
	}
	return &metricspb.MetricsData{ResourceMetrics: []*metricspb.ResourceMetrics{{
		Resource: res,
		ScopeMetrics: []*metricspb.ScopeMetrics{{
			Scope:   &commonpb.InstrumentationScope{Name: "github.com/wirebench/wirebench/export"},
			Metrics: ms,
		}},
	}}}
}
