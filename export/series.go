package export

import (
	"slices"
	"strings"
	"time"

	"github.com/wirebench/wirebench/results"
)

// Label is one label (Prometheus) or attribute (OTLP).
type Label struct{ Name, Value string }

// kind is a metric's type.
type kind int

const (
	counter kind = iota
	histKind
)

// metric is one exported series at one time: a cumulative counter or a
// cumulative histogram, with the labels beyond the run's own.
type metric struct {
	name   string // Prometheus name; OTLP uses otelName(name)
	help   string
	unit   string // UCUM, for OTLP
	kind   kind
	labels []Label
	value  float64
	hist   expBuckets
	ex     []results.Exemplar // with trace IDs, for histograms
}

// Metric names (Prometheus's; OTLP's are the same with dots, see otelName).
const (
	nameDuration = "wirebench_request_duration_seconds"
	nameRequests = "wirebench_requests_total"
	nameFailures = "wirebench_request_failures_total"
	nameStatus   = "wirebench_responses_total"
	nameBytes    = "wirebench_bytes_total"
	nameCPU      = "wirebench_client_cpu_seconds_total"
	nameDropped  = "wirebench_export_dropped_total"
)

// collect turns a (cumulative) result into metrics. dropped is the
// exporter's count of snapshots it dropped so far.
func collect(l *results.Load, dropped int64) []metric {
	var ms []metric
	ex := exemplarsByOp(l)
	for _, op := range l.Ops {
		ms = append(ms, metric{name: nameDuration, help: "Request latency (from the intended send time in open loop), per operation.",
			unit: "s", kind: histKind, labels: []Label{{"op", op.Name}}, hist: toExp(op.Latency), ex: ex[op.Name]})
		ms = append(ms, metric{name: nameRequests, help: "Requests completed, per operation.", unit: "{request}",
			labels: []Label{{"op", op.Name}}, value: float64(op.Requests)})
	}
	for _, k := range sortedKeys(l.Failures) {
		ms = append(ms, metric{name: nameFailures, help: "Failed requests, by reason.", unit: "{request}",
			labels: []Label{{"reason", k}}, value: float64(l.Failures[k])})
	}
	for _, k := range sortedKeys(l.Status) {
		ms = append(ms, metric{name: nameStatus, help: "Responses, by status.", unit: "{response}",
			labels: []Label{{"status", k}}, value: float64(l.Status[k])})
	}
	b := l.Bytes
	for _, x := range []struct {
		layer, dir string
		n          int64
	}{
		{"body", "in", b.BodyIn}, {"body", "out", b.BodyOut},
		{"framing", "in", max(b.WireIn-b.BodyIn, 0)}, {"framing", "out", max(b.WireOut-b.BodyOut, 0)},
	} {
		ms = append(ms, metric{name: nameBytes, help: "Bytes on the client's sockets, by layer (body: payload; framing: headers and frames) and direction.",
			unit: "By", labels: []Label{{"layer", x.layer}, {"direction", x.dir}}, value: float64(x.n)})
	}
	ms = append(ms,
		metric{name: nameCPU, help: "The load client's own CPU time.", unit: "s", labels: []Label{{"mode", "user"}}, value: l.CPU.User.Seconds()},
		metric{name: nameCPU, help: "The load client's own CPU time.", unit: "s", labels: []Label{{"mode", "system"}}, value: l.CPU.System.Seconds()},
		metric{name: nameDropped, help: "Snapshots the exporter dropped because its queue was full (the next one carries the same totals).",
			unit: "{snapshot}", value: float64(dropped)},
	)
	return ms
}

// exemplarsByOp groups the run's exemplars that have trace IDs by
// operation, oldest first, without repeats.
func exemplarsByOp(l *results.Load) map[string][]results.Exemplar {
	if l.Exemplars == nil {
		return nil
	}
	m := map[string][]results.Exemplar{}
	seen := map[string]bool{}
	for _, e := range slices.Concat(l.Exemplars.Buckets, l.Exemplars.Slowest) {
		if e.TraceID == "" || seen[e.TraceID] {
			continue
		}
		seen[e.TraceID] = true
		m[e.Op] = append(m[e.Op], e)
	}
	for _, es := range m {
		slices.SortFunc(es, func(a, b results.Exemplar) int { return exemplarTime(a).Compare(exemplarTime(b)) })
	}
	return m
}

// exemplarTime is when an exemplar's request ended: when it was observed.
func exemplarTime(e results.Exemplar) time.Time { return e.Start.Add(e.Latency) }

func sortedKeys(m map[string]int64) []string {
	ks := make([]string, 0, len(m))
	for k := range m {
		ks = append(ks, k)
	}
	slices.Sort(ks)
	return ks
}

// otelName is the OTLP name of a Prometheus metric name: dots for
// underscores, without the unit and _total suffixes that OpenTelemetry
// carries in the unit and the monotonic flag (the Prometheus OTLP
// receiver adds them back).
func otelName(name string) string {
	name = strings.TrimSuffix(name, "_total")
	name = strings.TrimSuffix(name, "_seconds")
	return strings.ReplaceAll(name, "_", ".")
}
