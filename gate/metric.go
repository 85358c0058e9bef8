package gate

import (
	"fmt"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/wirebench/wirebench/results"
)

// Unit says how a metric's values print.
type Unit string

// Units of the metrics.
const (
	UnitDuration Unit = "ns"    // a time in nanoseconds
	UnitRate     Unit = "per_s" // per second
	UnitBytes    Unit = "bytes"
)

// Metric is one figure a gate can hold a change to, read from every
// trial of a cell.
type Metric struct {
	Name string // as given to --max-regression: p99, rps, cpu_per_req
	Desc string
	Unit Unit
	// HigherIsBetter is true for throughput and capacity: their regression
	// is a fall.
	HigherIsBetter bool
	// Value reads the metric from one trial; false when the trial does not
	// have it (no server sampled, no requests). Values are positive.
	Value func(t results.Trial) (float64, bool)
}

// Metrics are every metric a gate knows, by name.
var Metrics = []Metric{
	{Name: "p50", Desc: "median latency", Unit: UnitDuration, Value: latency(0.50)},
	{Name: "p90", Desc: "90th percentile latency", Unit: UnitDuration, Value: latency(0.90)},
	{Name: "p95", Desc: "95th percentile latency", Unit: UnitDuration, Value: latency(0.95)},
	{Name: "p99", Desc: "99th percentile latency", Unit: UnitDuration, Value: latency(0.99)},
	{Name: "p999", Desc: "99.9th percentile latency", Unit: UnitDuration, Value: latency(0.999)},
	{Name: "mean", Desc: "mean latency", Unit: UnitDuration, Value: latency(-1)},
	{Name: "rps", Desc: "requests per second", Unit: UnitRate, HigherIsBetter: true, Value: func(t results.Trial) (float64, bool) {
		if t.Load.Elapsed() <= 0 {
			return 0, false
		}
		return positive(t.Load.RPS())
	}},
	{Name: "cpu_per_req", Desc: "server CPU time per request", Unit: UnitDuration, Value: func(t results.Trial) (float64, bool) {
		if t.Server.CPU <= 0 || t.Load.Requests == 0 {
			return 0, false
		}
		return positive(float64(t.Server.CPU) / float64(t.Load.Requests))
	}},
	{Name: "rss", Desc: "server peak RSS", Unit: UnitBytes, Value: func(t results.Trial) (float64, bool) {
		return positive(float64(t.Server.PeakRSS))
	}},
	{Name: "capacity", Desc: "the highest rate within the study's SLO (measure: capacity)", Unit: UnitRate, HigherIsBetter: true, Value: capacity},
}

// aliases are the report's metric keys, accepted too.
var aliases = map[string]string{
	"lat_p50": "p50", "lat_p90": "p90", "lat_p95": "p95", "lat_p99": "p99", "lat_avg": "mean", "avg": "mean",
	"server_cpu_per_req": "cpu_per_req", "peak_rss": "rss", "p99.9": "p999",
}

// MetricByName returns the metric called name (or one of its aliases).
func MetricByName(name string) (Metric, bool) {
	if a, ok := aliases[name]; ok {
		name = a
	}
	i := slices.IndexFunc(Metrics, func(m Metric) bool { return m.Name == name })
	if i < 0 {
		return Metric{}, false
	}
	return Metrics[i], true
}

// MetricNames lists the metrics' names, for messages.
func MetricNames() string {
	var names []string
	for _, m := range Metrics {
		names = append(names, m.Name)
	}
	return strings.Join(names, ", ")
}

// latency reads a quantile of the trial's latency histogram (q < 0: the mean).
func latency(q float64) func(results.Trial) (float64, bool) {
	return func(t results.Trial) (float64, bool) {
		h := t.Load.Latency
		if h == nil || h.Count() == 0 {
			return 0, false
		}
		if q < 0 {
			return positive(float64(h.Mean()))
		}
		return positive(float64(h.Quantile(q)))
	}
}

func positive(v float64) (float64, bool) {
	return v, v > 0 && !math.IsInf(v, 0) && !math.IsNaN(v)
}

// Format prints a value of the metric for people, with about four
// significant digits.
func (m Metric) Format(v float64) string {
	if math.IsNaN(v) {
		return "—"
	}
	switch m.Unit {
	case UnitDuration:
		d := time.Duration(math.Round(v))
		switch {
		case d >= time.Second:
			return fmt.Sprintf("%.4gs", d.Seconds())
		case d >= time.Millisecond:
			return fmt.Sprintf("%.4gms", float64(d)/1e6)
		case d >= time.Microsecond:
			return fmt.Sprintf("%.4gµs", float64(d)/1e3)
		}
		return fmt.Sprintf("%dns", d)
	case UnitBytes:
		const mib = 1 << 20
		if v >= mib {
			return fmt.Sprintf("%.4g MiB", v/mib)
		}
		return fmt.Sprintf("%.4g KiB", v/1024)
	}
	switch {
	case v >= 1e6:
		return fmt.Sprintf("%.4gM/s", v/1e6)
	case v >= 1e3:
		return fmt.Sprintf("%.4gk/s", v/1e3)
	}
	return fmt.Sprintf("%.4g/s", v)
}
