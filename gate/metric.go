package gate

import (
	"math"
	"slices"
	"strings"
	"sync"

	"github.com/wirebench/wirebench/results"
)

// Unit is a metric's unit (results.Unit: one catalogue of units).
type Unit = results.Unit

// Units of the metrics.
const (
	UnitDuration = results.UnitDuration
	UnitRate     = results.UnitRate
	UnitBytes    = results.UnitBytes
)

// Metric is a metric of the catalogue (results.Metrics) as a gate holds
// a change to it: by its short name (p99, rps, cpu_per_req), and reading
// only positive figures, since the gate compares their logarithms.
type Metric struct {
	results.Metric
	Name string // as given to --max-regression: p99, rps, cpu_per_req
}

// Value reads the metric from one trial; false when the trial does not
// have it (no server sampled, no requests). Values are positive, but for
// a capacity of 0: no rate met the SLO.
func (m Metric) Value(t results.Trial) (float64, bool) {
	if m.Key == "capacity" {
		return capacity(t)
	}
	v, ok := m.Metric.Value(t)
	return v, ok && v > 0 && !math.IsInf(v, 0) && !math.IsNaN(v)
}

// Format prints a value of the metric for people (results.Unit.Format).
func (m Metric) Format(v float64) string { return m.Unit.Format(v) }

// Metrics are every metric a gate knows: the catalogue's. Built on first
// use: every process of the binary links this package, `wirebench serve`
// too, whose live heap each GC cycle marks.
var Metrics = sync.OnceValue(func() []Metric {
	out := make([]Metric, len(results.Metrics))
	for i, m := range results.Metrics {
		out[i] = Metric{Metric: m, Name: m.ShortName()}
	}
	return out
})

// MetricByName returns the metric called name: its short name, its key
// (lat_p99, the report's) or an alias (p99.9).
func MetricByName(name string) (Metric, bool) {
	m, ok := results.MetricByName(name)
	if !ok {
		return Metric{}, false
	}
	ms := Metrics()
	i := slices.IndexFunc(ms, func(g Metric) bool { return g.Key == m.Key })
	return ms[i], true
}

// MetricNames lists the metrics' names, for messages.
func MetricNames() string {
	ms := Metrics()
	names := make([]string, len(ms))
	for i, m := range ms {
		names[i] = m.Name
	}
	return strings.Join(names, ", ")
}
