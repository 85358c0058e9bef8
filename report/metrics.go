package report

import (
	"time"

	"github.com/wirebench/wirebench/results"
)

// Unit says how a metric's numbers are printed.
type Unit int

// Units of the metrics.
const (
	UnitRate     Unit = iota // per second
	UnitDuration             // nanoseconds
	UnitBytes                // bytes
	UnitCount                // a count, printed exactly: 14,122
)

// Metric is one number taken from every trial of a cell. Reports summarize
// each metric across trials (median and CI) and compare cells on it.
type Metric struct {
	Key  string // stable, machine-friendly
	Name string // for people
	// CSV is the column name in report.csv, with its unit: req_per_s,
	// p50_ms, recv_wire_bytes_per_req. Durations are written in ms.
	CSV  string
	Unit Unit
	// HigherIsBetter is true for throughput, false for costs.
	HigherIsBetter bool
	// Optional metrics get CSV columns only in reports where some cell
	// has them (capacity), so other reports' columns stay as they were.
	Optional bool
	// Value reads the metric from one trial; false when the trial does
	// not have it (no server samples, no requests).
	Value func(t results.Trial) (float64, bool)
}

// Metrics are the per-trial metrics of every report, in column order.
// Latency percentiles are taken per trial and then summarized across
// trials, so a trial with a bad tail shows up as spread rather than being
// averaged away in one merged histogram.
var Metrics = []Metric{
	{Key: "rps", CSV: "req_per_s", Name: "req/s", Unit: UnitRate, HigherIsBetter: true, Value: func(t results.Trial) (float64, bool) {
		return t.Load.RPS(), t.Load.Elapsed() > 0
	}},
	{Key: "lat_avg", CSV: "avg_ms", Name: "avg", Unit: UnitDuration, Value: latency(-1)},
	{Key: "lat_p50", CSV: "p50_ms", Name: "p50", Unit: UnitDuration, Value: latency(0.50)},
	{Key: "lat_p90", CSV: "p90_ms", Name: "p90", Unit: UnitDuration, Value: latency(0.90)},
	{Key: "lat_p95", CSV: "p95_ms", Name: "p95", Unit: UnitDuration, Value: latency(0.95)},
	{Key: "lat_p99", CSV: "p99_ms", Name: "p99", Unit: UnitDuration, Value: latency(0.99)},
	{Key: "lat_max", CSV: "max_ms", Name: "max", Unit: UnitDuration, Value: latency(1)},
	{Key: "recv_body_per_req", CSV: "recv_body_bytes_per_req", Name: "recv body/req", Unit: UnitBytes, Value: perRequest(func(t results.Trial) int64 { return t.Load.Bytes.BodyIn })},
	{Key: "recv_wire_per_req", CSV: "recv_wire_bytes_per_req", Name: "recv wire/req", Unit: UnitBytes, Value: perRequest(func(t results.Trial) int64 { return t.Load.Bytes.WireIn })},
	{Key: "sent_body_per_req", CSV: "sent_body_bytes_per_req", Name: "sent body/req", Unit: UnitBytes, Value: perRequest(func(t results.Trial) int64 { return t.Load.Bytes.BodyOut })},
	{Key: "sent_wire_per_req", CSV: "sent_wire_bytes_per_req", Name: "sent wire/req", Unit: UnitBytes, Value: perRequest(func(t results.Trial) int64 { return t.Load.Bytes.WireOut })},
	{Key: "server_cpu_per_req", CSV: "server_cpu_ms_per_req", Name: "server CPU/req", Unit: UnitDuration, Value: func(t results.Trial) (float64, bool) {
		if t.Server.CPU <= 0 || t.Load.Requests == 0 {
			return 0, false
		}
		return float64(t.Server.CPU) / float64(t.Load.Requests), true
	}},
	{Key: "peak_rss", CSV: "peak_rss_bytes", Name: "peak RSS", Unit: UnitBytes, Value: func(t results.Trial) (float64, bool) {
		return float64(t.Server.PeakRSS), t.Server.PeakRSS > 0
	}},
}

// MetricByKey returns the metric with the given key.
func MetricByKey(key string) (Metric, bool) {
	for _, m := range Metrics {
		if m.Key == key {
			return m, true
		}
	}
	return Metric{}, false
}

// latency reads a quantile of the trial's latency histogram; q < 0 is the
// mean and q = 1 the maximum.
func latency(q float64) func(results.Trial) (float64, bool) {
	return func(t results.Trial) (float64, bool) {
		h := t.Load.Latency
		if h == nil || h.Count() == 0 {
			return 0, false
		}
		var d time.Duration
		switch {
		case q < 0:
			d = h.Mean()
		case q >= 1:
			d = h.Max()
		default:
			d = h.Quantile(q)
		}
		return float64(d), true
	}
}

func perRequest(count func(results.Trial) int64) func(results.Trial) (float64, bool) {
	return func(t results.Trial) (float64, bool) {
		if t.Load.Requests == 0 || (t.Load.Stream != nil && t.Load.Stream.InBrowser) { // the browser's bytes are not ours to count
			return 0, false
		}
		return float64(count(t)) / float64(t.Load.Requests), true
	}
}
