package export

import (
	"context"
	"encoding/hex"
	"fmt"
	"net/http"
	"strings"

	"google.golang.org/protobuf/encoding/protowire"

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
// not need. It is written field by field (wire.go says why; field
// numbers from opentelemetry-proto's metrics.proto, common.proto and
// resource.proto) in the order protobuf-go marshals the generated types:
// by field number, a oneof's member last.
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
	c := s.Client
	if c == nil {
		c = http.DefaultClient
	}
	return post(ctx, c, s.URL, otlpMetrics(nil, b), map[string]string{"Content-Type": "application/x-protobuf", "User-Agent": "wirebench"})
}

// otlpMetrics appends b as a MetricsData: one ResourceMetrics (service
// wirebench, the run as its instance) of one ScopeMetrics, one Metric
// per name holding every series of that name as a data point.
func otlpMetrics(out []byte, b *Batch) []byte {
	start, at := uint64(b.Start.UnixNano()), uint64(b.At.UnixNano())
	if b.Start.IsZero() {
		start = at
	}
	var names []string
	byName := map[string][]metric{}
	for _, m := range b.metrics {
		if byName[m.name] == nil {
			names = append(names, m.name)
		}
		byName[m.name] = append(byName[m.name], m)
	}
	resource := []Label{{"service.name", "wirebench"}}
	for _, l := range b.Labels {
		if l.Name == "run" {
			resource = append(resource, Label{"service.instance.id", l.Value})
		}
	}
	return appendMessage(out, 1, func(out []byte) []byte { // MetricsData.resource_metrics
		out = appendMessage(out, 1, func(out []byte) []byte { // ResourceMetrics.resource
			return appendAttrs(out, 1, resource) // Resource.attributes
		})
		return appendMessage(out, 2, func(out []byte) []byte { // ResourceMetrics.scope_metrics
			out = appendMessage(out, 1, func(out []byte) []byte { // ScopeMetrics.scope
				return appendString(out, 1, "github.com/wirebench/wirebench/export") // InstrumentationScope.name
			})
			for _, name := range names {
				out = appendMessage(out, 2, func(out []byte) []byte { // ScopeMetrics.metrics
					return appendOTLPMetric(out, byName[name], b.Labels, start, at)
				})
			}
			return out
		})
	})
}

// appendOTLPMetric appends a Metric of the series ms (one name, one kind).
func appendOTLPMetric(out []byte, ms []metric, run []Label, start, at uint64) []byte {
	m := ms[0]
	out = appendString(out, 1, otelName(m.name))
	out = appendString(out, 2, m.help)
	out = appendString(out, 3, m.unit)
	const cumulative = 2 // AGGREGATION_TEMPORALITY_CUMULATIVE
	if m.kind == histKind {
		return appendMessage(out, 10, func(out []byte) []byte { // Metric.exponential_histogram
			for _, m := range ms {
				out = appendMessage(out, 1, func(out []byte) []byte { // ExponentialHistogram.data_points
					return appendOTLPHistogram(out, m, run, start, at)
				})
			}
			return appendVarint(out, 2, cumulative, false)
		})
	}
	return appendMessage(out, 7, func(out []byte) []byte { // Metric.sum
		for _, m := range ms {
			out = appendMessage(out, 1, func(out []byte) []byte { // Sum.data_points: a NumberDataPoint
				out = appendFixed64(out, 2, start)
				out = appendFixed64(out, 3, at)
				out = appendAttrs(out, 7, run, m.labels)
				return appendDouble(out, 4, m.value, true) // as_double, a oneof member: last
			})
		}
		out = appendVarint(out, 2, cumulative, false)
		return appendVarint(out, 3, 1, false) // is_monotonic
	})
}

// appendOTLPHistogram appends m as an ExponentialHistogramDataPoint.
func appendOTLPHistogram(out []byte, m metric, run []Label, start, at uint64) []byte {
	e := m.hist
	out = appendAttrs(out, 1, run, m.labels)
	out = appendFixed64(out, 2, start)
	out = appendFixed64(out, 3, at)
	out = appendFixed64(out, 4, e.count)
	if e.count > 0 {
		out = appendDouble(out, 5, e.sum, true) // optional
	}
	out = appendSint(out, 6, Schema)
	if e.count > 0 {
		out = appendMessage(out, 8, func(out []byte) []byte { // positive: Buckets
			out = appendSint(out, 1, int64(e.offset-1))
			return appendPacked(out, 2, e.counts, func(c uint64) uint64 { return c })
		})
	}
	for _, x := range m.ex {
		id, err := hex.DecodeString(x.TraceID)
		if err != nil || len(id) != 16 {
			continue // not a W3C trace ID: nothing to link
		}
		out = appendMessage(out, 11, func(out []byte) []byte { // exemplars: an Exemplar
			out = appendFixed64(out, 2, uint64(exemplarTime(x).UnixNano()))
			out = appendBytesField(out, 5, id)                     // trace_id
			out = appendAttrs(out, 7, exemplarAttrs(x))            // filtered_attributes
			return appendDouble(out, 3, x.Latency.Seconds(), true) // as_double, a oneof member: last
		})
	}
	if e.count > 0 {
		out = appendDouble(out, 12, e.min, true) // optional
		out = appendDouble(out, 13, e.max, true) // optional
	}
	return appendDouble(out, 14, ZeroThreshold, false)
}

// exemplarAttrs are an exemplar's attributes beyond its trace ID.
func exemplarAttrs(x results.Exemplar) []Label {
	as := []Label{{"status", x.Status}}
	if x.Fail != "" {
		as = append(as, Label{"failure", x.Fail})
	}
	return as
}

// appendAttrs appends the labels of each list as KeyValues with string
// AnyValues, field num.
func appendAttrs(out []byte, num protowire.Number, lists ...[]Label) []byte {
	for _, ls := range lists {
		for _, l := range ls {
			out = appendMessage(out, num, func(out []byte) []byte {
				out = appendString(out, 1, l.Name)
				return appendMessage(out, 2, func(out []byte) []byte { // value: AnyValue
					// string_value, a oneof member: written even when empty
					out = protowire.AppendTag(out, 1, protowire.BytesType)
					return protowire.AppendString(out, l.Value)
				})
			})
		}
	}
	return out
}
