package results

import (
	"slices"
	"strings"
	"time"
)

// Unit is a metric's unit: how its numbers are printed and exported.
type Unit string

// Units of the metrics. A value is in the unit's base: nanoseconds for a
// duration, per second for a rate, bytes, or a plain count.
const (
	UnitRate     Unit = "per_s" // per second
	UnitDuration Unit = "ns"    // nanoseconds
	UnitBytes    Unit = "bytes" // bytes (IEC when printed: 1 KiB = 1024 B)
	UnitCount    Unit = "count" // a count, printed exactly: 14,122
)

// Metric is one number taken from every trial of a cell: reports
// summarize it across trials and compare cells on it, gates hold a change
// to it, exports carry it to trackers. Metrics is the one catalogue.
type Metric struct {
	// Key is stable and machine-friendly: the metric's name in result
	// files (a study's answer), report tables and CSV rows.
	Key string
	// Name is the short name people type (gate --max-regression p99:+20%,
	// exports): p99, rps, cpu_per_req. Empty: Key.
	Name string
	// Aliases are other names MetricByName accepts (p99.9, avg).
	Aliases []string
	// Label is for people, in tables: "req/s", "server CPU/req".
	Label string
	// Desc says what it is in a few words: "99th percentile latency".
	Desc string
	// CSV is the column name in report.csv, with its unit: req_per_s,
	// p50_ms, recv_wire_bytes_per_req. Durations are written in ms.
	CSV  string
	Unit Unit
	// HigherIsBetter is true for throughput and capacity, false for costs.
	HigherIsBetter bool
	// Optional metrics get CSV columns only in reports where some cell
	// has them (capacity), so other reports' columns stay as they were.
	Optional bool
	// Value reads the metric from one trial; false when the trial does
	// not have it (no server samples, no requests).
	Value func(t Trial) (float64, bool)
}

// ShortName is Name, or Key when the metric has no shorter name.
func (m Metric) ShortName() string {
	if m.Name != "" {
		return m.Name
	}
	return m.Key
}

// Metrics are every metric, in the column order of reports. Latency
// percentiles are taken per trial and then summarized across trials, so a
// trial with a bad tail shows up as spread rather than being averaged
// away in one merged histogram. Stream and browser cells have their own
// (a stream cell's "request" is one whole exchange, so its latency is the
// time to the last item); cells without them do not have them and tables
// leave them out.
var Metrics = []Metric{
	{Key: "rps", Label: "req/s", Desc: "requests per second", CSV: "req_per_s", Unit: UnitRate, HigherIsBetter: true,
		Value: func(t Trial) (float64, bool) { return t.Load.RPS(), t.Load.Elapsed() > 0 }},
	{Key: "lat_avg", Name: "mean", Aliases: []string{"avg"}, Label: "avg", Desc: "mean latency", CSV: "avg_ms", Unit: UnitDuration, Value: latencyAt(-1)},
	{Key: "lat_p50", Name: "p50", Label: "p50", Desc: "median latency", CSV: "p50_ms", Unit: UnitDuration, Value: latencyAt(0.50)},
	{Key: "lat_p90", Name: "p90", Label: "p90", Desc: "90th percentile latency", CSV: "p90_ms", Unit: UnitDuration, Value: latencyAt(0.90)},
	{Key: "lat_p95", Name: "p95", Label: "p95", Desc: "95th percentile latency", CSV: "p95_ms", Unit: UnitDuration, Value: latencyAt(0.95)},
	{Key: "lat_p99", Name: "p99", Label: "p99", Desc: "99th percentile latency", CSV: "p99_ms", Unit: UnitDuration, Value: latencyAt(0.99)},
	{Key: "lat_p999", Name: "p999", Aliases: []string{"p99.9"}, Label: "p99.9", Desc: "99.9th percentile latency", CSV: "p999_ms", Unit: UnitDuration, Value: latencyAt(0.999)},
	{Key: "lat_max", Name: "max", Label: "max", Desc: "maximum latency", CSV: "max_ms", Unit: UnitDuration, Value: latencyAt(1)},
	{Key: "recv_body_per_req", Label: "recv body/req", Desc: "received body bytes per request", CSV: "recv_body_bytes_per_req", Unit: UnitBytes, Value: perRequest(func(t Trial) int64 { return t.Load.Bytes.BodyIn })},
	{Key: "recv_wire_per_req", Label: "recv wire/req", Desc: "received wire bytes per request", CSV: "recv_wire_bytes_per_req", Unit: UnitBytes, Value: perRequest(func(t Trial) int64 { return t.Load.Bytes.WireIn })},
	{Key: "sent_body_per_req", Label: "sent body/req", Desc: "sent body bytes per request", CSV: "sent_body_bytes_per_req", Unit: UnitBytes, Value: perRequest(func(t Trial) int64 { return t.Load.Bytes.BodyOut })},
	{Key: "sent_wire_per_req", Label: "sent wire/req", Desc: "sent wire bytes per request", CSV: "sent_wire_bytes_per_req", Unit: UnitBytes, Value: perRequest(func(t Trial) int64 { return t.Load.Bytes.WireOut })},
	{Key: "server_cpu_per_req", Name: "cpu_per_req", Label: "server CPU/req", Desc: "server CPU time per request", CSV: "server_cpu_ms_per_req", Unit: UnitDuration,
		Value: func(t Trial) (float64, bool) {
			if t.Server.CPU <= 0 || t.Load.Requests == 0 {
				return 0, false
			}
			return float64(t.Server.CPU) / float64(t.Load.Requests), true
		}},
	{Key: "peak_rss", Name: "rss", Label: "peak RSS", Desc: "server peak RSS", CSV: "peak_rss_bytes", Unit: UnitBytes,
		Value: func(t Trial) (float64, bool) { return float64(t.Server.PeakRSS), t.Server.PeakRSS > 0 }},

	{Key: "first_p50", Label: "first item p50", Desc: "median time to a stream's first item", CSV: "first_item_p50_ms", Unit: UnitDuration, Value: streamHist(func(s *Stream) bool { return !s.InBrowser }, 0.5, true)},
	{Key: "per_msg_p50", Label: "per message p50", Desc: "median time per stream message", CSV: "per_message_p50_ms", Unit: UnitDuration, Value: streamHist(nil, 0.5, false)},
	{Key: "per_msg_p99", Label: "per message p99", Desc: "99th percentile time per stream message", CSV: "per_message_p99_ms", Unit: UnitDuration, Value: streamHist(nil, 0.99, false)},
	{Key: "items_per_s", Label: "items/s", Desc: "stream items per second", CSV: "items_per_s", Unit: UnitRate, HigherIsBetter: true,
		Value: func(t Trial) (float64, bool) {
			s := t.Load.Stream
			if s == nil || s.Items == 0 {
				return 0, false
			}
			return s.ItemsPerSecond(t.Load.Measured()), true
		}},
	{Key: "client_cpu_per_req", Label: "client CPU/req", Desc: "client CPU time per request", CSV: "client_cpu_ms_per_req", Unit: UnitDuration,
		Value: func(t Trial) (float64, bool) {
			c := t.Load.CPU.User + t.Load.CPU.System
			return float64(c) / float64(max(t.Load.Requests, 1)), c > 0 && t.Load.Requests > 0
		}},
	{Key: "client_allocs_per_req", Label: "client allocs/req", Desc: "client heap allocations per request", CSV: "client_allocs_per_req", Unit: UnitCount,
		Value: func(t Trial) (float64, bool) {
			return float64(t.Load.CPU.Allocs) / float64(max(t.Load.Requests, 1)), t.Load.CPU.Allocs > 0 && t.Load.Requests > 0
		}},
	{Key: "server_allocs_per_req", Label: "server allocs/req", Desc: "server heap allocations per request", CSV: "server_allocs_per_req", Unit: UnitCount, Value: serverDelta("go_memstats_mallocs_total")},
	{Key: "server_alloc_bytes_per_req", Label: "server alloc bytes/req", Desc: "server bytes allocated per request", CSV: "server_alloc_bytes_per_req", Unit: UnitBytes, Value: serverDelta("go_memstats_alloc_bytes_total")},
	layerMetric("message", "payload (message) bytes/req", func(l Layers) int64 { return l.Message }),
	layerMetric("envelope", "envelope bytes/req", func(l Layers) int64 { return l.Envelope }),
	layerMetric("h2_frames", "HTTP/2 frame bytes/req", func(l Layers) int64 { return l.H2Frames }),
	layerMetric("h2_headers", "HTTP/2 header (HPACK) bytes/req", func(l Layers) int64 { return l.H2Headers }),
	layerMetric("ws", "WebSocket frame bytes/req", func(l Layers) int64 { return l.WS }),
	layerMetric("h1_headers", "HTTP/1.1 head bytes/req", func(l Layers) int64 { return l.H1Headers }),
	layerMetric("h1_framing", "HTTP/1.1 chunking bytes/req", func(l Layers) int64 { return l.H1Framing }),
	layerMetric("quic", "QUIC packet bytes/req", func(l Layers) int64 { return l.QUIC }),
	layerMetric("h3_frames", "HTTP/3 frame bytes/req", func(l Layers) int64 { return l.H3Frames }),
	layerMetric("h3_headers", "HTTP/3 header (QPACK) bytes/req", func(l Layers) int64 { return l.QPACK }),

	// Capacity is the headline wherever a cell measured it: the most
	// load within the SLO, per server and per server core, when the
	// answer can be trusted (Untrusted). The trial's Load is the answer's
	// measurement, so the other metrics describe the server at capacity.
	{Key: "capacity", Label: "capacity", Desc: "the highest rate within the SLO (measure: capacity)", CSV: "capacity_req_per_s", Unit: UnitRate, HigherIsBetter: true, Optional: true,
		Value: func(t Trial) (float64, bool) {
			if t.Capacity == nil || t.Capacity.Untrusted() != "" {
				return 0, false
			}
			return t.Capacity.Rate, true
		}},
	{Key: "capacity_per_core", Label: "capacity/core", Desc: "capacity per server core", CSV: "capacity_req_per_s_per_core", Unit: UnitRate, HigherIsBetter: true, Optional: true,
		Value: func(t Trial) (float64, bool) {
			if t.Capacity == nil || t.Capacity.Untrusted() != "" {
				return 0, false
			}
			return t.Capacity.PerCore(), t.Capacity.PerCore() > 0
		}},
}

// MetricByKey returns the metric whose Key is key, exactly: keys are what
// files and tables store.
func MetricByKey(key string) (Metric, bool) {
	i := slices.IndexFunc(Metrics, func(m Metric) bool { return m.Key == key })
	if i < 0 {
		return Metric{}, false
	}
	return Metrics[i], true
}

// MetricByName returns the metric called name: its short name, its key or
// one of its aliases, as people type them.
func MetricByName(name string) (Metric, bool) {
	i := slices.IndexFunc(Metrics, func(m Metric) bool {
		return m.ShortName() == name || m.Key == name || slices.Contains(m.Aliases, name)
	})
	if i < 0 {
		return Metric{}, false
	}
	return Metrics[i], true
}

// MetricNames lists the metrics' short names, for messages.
func MetricNames() string {
	names := make([]string, len(Metrics))
	for i, m := range Metrics {
		names[i] = m.ShortName()
	}
	return strings.Join(names, ", ")
}

// latencyAt reads a quantile of the trial's latency histogram; q < 0 is
// the mean and q = 1 the maximum.
func latencyAt(q float64) func(Trial) (float64, bool) {
	return func(t Trial) (float64, bool) {
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

func perRequest(count func(Trial) int64) func(Trial) (float64, bool) {
	return func(t Trial) (float64, bool) {
		if t.Load.Requests == 0 || (t.Load.Stream != nil && t.Load.Stream.InBrowser) { // the browser's bytes are not ours to count
			return 0, false
		}
		return float64(count(t)) / float64(t.Load.Requests), true
	}
}

// streamHist reads a quantile of a stream histogram: First (first) or
// PerMessage; only for results that pass keep (nil: all).
func streamHist(keep func(*Stream) bool, q float64, first bool) func(Trial) (float64, bool) {
	return func(t Trial) (float64, bool) {
		s := t.Load.Stream
		if s == nil || (keep != nil && !keep(s)) {
			return 0, false
		}
		h := s.PerMessage
		if first {
			h = s.First
		}
		if h == nil || h.Count() == 0 {
			return 0, false
		}
		return float64(h.Quantile(q)) / float64(time.Nanosecond), true
	}
}

// serverDelta is a server counter's growth over the measured run per
// request (study: the Go memory check reads /metrics right before and
// after it; the two scrapes' own allocations are included, a few hundred).
func serverDelta(name string) func(Trial) (float64, bool) {
	return func(t Trial) (float64, bool) {
		end, ok1 := t.Server.GoMem[name]
		start, ok2 := t.Server.GoMem[name+"_at_start"]
		if !ok1 || !ok2 || t.Load.Requests == 0 || end < start {
			return 0, false
		}
		return (end - start) / float64(t.Load.Requests), true
	}
}

// layerMetric is one layer's bytes, both directions, per request.
func layerMetric(key, label string, f func(Layers) int64) Metric {
	return Metric{Key: "layer_" + key, CSV: "layer_" + key + "_bytes_per_req", Label: label, Desc: label, Unit: UnitBytes,
		Value: func(t Trial) (float64, bool) {
			var in, out Layers
			switch s, l := t.Load.Stream, t.Load.Layers; {
			case s != nil && !s.InBrowser:
				in, out = s.In, s.Out
			case s == nil && l != nil: // HTTP/3 runs: only their own layers
				in, out = l.In, l.Out
				if f(in)+f(out) == 0 {
					return 0, false
				}
			default:
				return 0, false
			}
			if t.Load.Requests == 0 {
				return 0, false
			}
			return float64(f(in)+f(out)) / float64(t.Load.Requests), true
		}}
}
