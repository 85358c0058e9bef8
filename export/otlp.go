package export

import (
	"context"
	"encoding/hex"
	"fmt"
	"net/http"
	"strings"

	commonpb "go.opentelemetry.io/proto/otlp/common/v1"
	metricspb "go.opentelemetry.io/proto/otlp/metrics/v1"
	resourcepb "go.opentelemetry.io/proto/otlp/resource/v1"
	"google.golang.org/protobuf/proto"

	"github.com/wirebench/wirebench/results"
)

// OTLP is a Sink that sends OTLP/HTTP metrics (binary protobuf) to an
// OpenTelemetry collector or back end: latency as cumulative exponential
// histograms of scale Schema, with exemplars carrying trace IDs, and the
// counters as cumulative monotonic sums.
//
// The body is a metrics.v1.MetricsData, which the OTLP specification
// makes wire-identical to the collector's ExportMetricsServiceRequest
// (both are field 1, repeated ResourceMetrics): the collector package
// would pull in grpc-gateway for its HTTP handlers, which a client does
// not need.
type OTLP struct {
	URL    string
	Client *http.Client // http.DefaultClient if nil
}

// NewOTLP returns a sink that posts to url (http://host:4318/v1/metrics).
func NewOTLP(url string) (*OTLP, error) {
	if !strings.HasPrefix(url, "http://") && !strings.HasPrefix(url, "https://") {
		return nil, fmt.Errorf("%w: OTLP URL %q: want http(s)://host:port/v1/metrics", ErrExport, url)
	}
	return &OTLP{URL: url}, nil
}

// Name implements Sink.
func (*OTLP) Name() string { return "otlp" }

// Send implements Sink.
func (s *OTLP) Send(ctx context.Context, b *Batch) error {
	raw, err := proto.Marshal(otlpMetrics(b))
	if err != nil {
		return fmt.Errorf("%w: encoding OTLP: %w", ErrExport, err)
	}
	c := s.Client
	if c == nil {
		c = http.DefaultClient
	}
	return post(ctx, c, s.URL, raw, map[string]string{"Content-Type": "application/x-protobuf", "User-Agent": "wirebench"})
}

// otlpMetrics converts a batch: one Metric per name, one data point per
// label set, the run's labels on every point (so that, as in Prometheus,
// a query can sum over segments) and on the resource as
// service.instance.id.
func otlpMetrics(b *Batch) *metricspb.MetricsData {
	start, at := uint64(b.Start.UnixNano()), uint64(b.At.UnixNano())
	if b.Start.IsZero() {
		start = at
	}
	var ms []*metricspb.Metric
	byName := map[string]*metricspb.Metric{}
	for _, m := range b.metrics {
		attrs := otlpAttrs(b.Labels, m.labels)
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
			h.ExponentialHistogram.DataPoints = append(h.ExponentialHistogram.DataPoints, otlpHistogram(m, attrs, start, at))
		default:
			sum, ok := om.Data.(*metricspb.Metric_Sum)
			if !ok {
				sum = &metricspb.Metric_Sum{Sum: &metricspb.Sum{IsMonotonic: true,
					AggregationTemporality: metricspb.AggregationTemporality_AGGREGATION_TEMPORALITY_CUMULATIVE}}
				om.Data = sum
			}
			sum.Sum.DataPoints = append(sum.Sum.DataPoints, &metricspb.NumberDataPoint{Attributes: attrs,
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

// otlpHistogram is m's histogram as an exponential-histogram point.
// OTLP's bucket i is (base^i, base^(i+1)], Prometheus's k is
// (base^(k−1), base^k]: the offset is one less.
func otlpHistogram(m metric, attrs []*commonpb.KeyValue, start, at uint64) *metricspb.ExponentialHistogramDataPoint {
	e := m.hist
	p := &metricspb.ExponentialHistogramDataPoint{Attributes: attrs, StartTimeUnixNano: start, TimeUnixNano: at,
		Count: e.count, Scale: Schema, ZeroThreshold: ZeroThreshold}
	if e.count > 0 {
		p.Sum, p.Min, p.Max = proto.Float64(e.sum), proto.Float64(e.min), proto.Float64(e.max)
		p.Positive = &metricspb.ExponentialHistogramDataPoint_Buckets{Offset: e.offset - 1, BucketCounts: e.counts}
	}
	for _, x := range m.ex {
		id, err := hex.DecodeString(x.TraceID)
		if err != nil || len(id) != 16 {
			continue // not a W3C trace ID: nothing to link
		}
		p.Exemplars = append(p.Exemplars, &metricspb.Exemplar{TimeUnixNano: uint64(exemplarTime(x).UnixNano()),
			Value: &metricspb.Exemplar_AsDouble{AsDouble: x.Latency.Seconds()}, TraceId: id,
			FilteredAttributes: exemplarAttrs(x)})
	}
	return p
}

// exemplarAttrs say what Prometheus's exemplar cannot: the status and,
// if it failed, why.
func exemplarAttrs(x results.Exemplar) []*commonpb.KeyValue {
	as := []*commonpb.KeyValue{strAttr("status", x.Status)}
	if x.Fail != "" {
		as = append(as, strAttr("failure", x.Fail))
	}
	return as
}

func otlpAttrs(run, own []Label) []*commonpb.KeyValue {
	as := make([]*commonpb.KeyValue, 0, len(run)+len(own))
	for _, l := range run {
		as = append(as, strAttr(l.Name, l.Value))
	}
	for _, l := range own {
		as = append(as, strAttr(l.Name, l.Value))
	}
	return as
}

func strAttr(k, v string) *commonpb.KeyValue {
	return &commonpb.KeyValue{Key: k, Value: &commonpb.AnyValue{Value: &commonpb.AnyValue_StringValue{StringValue: v}}}
}
