package report

import (
	"time"

	"github.com/wirebench/wirebench/results"
)

// The metrics of stream and browser cells (results.Stream), and the
// allocations of client and server apart. Cells without them simply do not
// have these metrics (tables leave the columns out); a stream cell's
// "request" is one whole exchange (a stream of the list, 100 bidi
// messages), so its latency is the time to the last item.
func init() { Metrics = append(Metrics, streamMetrics...) }

var streamMetrics = []Metric{
	{Key: "first_p50", CSV: "first_item_p50_ms", Name: "first item p50", Unit: UnitDuration, Value: streamHist(func(s *results.Stream) bool { return !s.InBrowser }, 0.5, true)},
	{Key: "per_msg_p50", CSV: "per_message_p50_ms", Name: "per message p50", Unit: UnitDuration, Value: streamHist(nil, 0.5, false)},
	{Key: "per_msg_p99", CSV: "per_message_p99_ms", Name: "per message p99", Unit: UnitDuration, Value: streamHist(nil, 0.99, false)},
	{Key: "items_per_s", CSV: "items_per_s", Name: "items/s", Unit: UnitRate, HigherIsBetter: true, Value: func(t results.Trial) (float64, bool) {
		s := t.Load.Stream
		if s == nil || s.Items == 0 {
			return 0, false
		}
		return s.ItemsPerSecond(t.Load.Measured()), true
	}},
	{Key: "client_cpu_per_req", CSV: "client_cpu_ms_per_req", Name: "client CPU/req", Unit: UnitDuration, Value: func(t results.Trial) (float64, bool) {
		c := t.Load.CPU.User + t.Load.CPU.System
		return float64(c) / float64(max(t.Load.Requests, 1)), c > 0 && t.Load.Requests > 0
	}},
	{Key: "client_allocs_per_req", CSV: "client_allocs_per_req", Name: "client allocs/req", Unit: UnitCount, Value: func(t results.Trial) (float64, bool) {
		return float64(t.Load.CPU.Allocs) / float64(max(t.Load.Requests, 1)), t.Load.CPU.Allocs > 0 && t.Load.Requests > 0
	}},
	{Key: "server_allocs_per_req", CSV: "server_allocs_per_req", Name: "server allocs/req", Unit: UnitCount, Value: serverDelta("go_memstats_mallocs_total")},
	{Key: "server_alloc_bytes_per_req", CSV: "server_alloc_bytes_per_req", Name: "server alloc bytes/req", Unit: UnitBytes, Value: serverDelta("go_memstats_alloc_bytes_total")},
	layerMetric("message", "payload (message) bytes/req", func(l results.Layers) int64 { return l.Message }),
	layerMetric("envelope", "envelope bytes/req", func(l results.Layers) int64 { return l.Envelope }),
	layerMetric("h2_frames", "HTTP/2 frame bytes/req", func(l results.Layers) int64 { return l.H2Frames }),
	layerMetric("h2_headers", "HTTP/2 header (HPACK) bytes/req", func(l results.Layers) int64 { return l.H2Headers }),
	layerMetric("ws", "WebSocket frame bytes/req", func(l results.Layers) int64 { return l.WS }),
	layerMetric("h1_headers", "HTTP/1.1 head bytes/req", func(l results.Layers) int64 { return l.H1Headers }),
	layerMetric("h1_framing", "HTTP/1.1 chunking bytes/req", func(l results.Layers) int64 { return l.H1Framing }),
	layerMetric("quic", "QUIC packet bytes/req", func(l results.Layers) int64 { return l.QUIC }),
	layerMetric("h3_frames", "HTTP/3 frame bytes/req", func(l results.Layers) int64 { return l.H3Frames }),
	layerMetric("h3_headers", "HTTP/3 header (QPACK) bytes/req", func(l results.Layers) int64 { return l.QPACK }),
}

// streamHist reads a quantile of a stream histogram: First (first) or
// PerMessage; only for results that pass keep (nil: all).
func streamHist(keep func(*results.Stream) bool, q float64, first bool) func(results.Trial) (float64, bool) {
	return func(t results.Trial) (float64, bool) {
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
func serverDelta(name string) func(results.Trial) (float64, bool) {
	return func(t results.Trial) (float64, bool) {
		end, ok1 := t.Server.GoMem[name]
		start, ok2 := t.Server.GoMem[name+"_at_start"]
		if !ok1 || !ok2 || t.Load.Requests == 0 || end < start {
			return 0, false
		}
		return (end - start) / float64(t.Load.Requests), true
	}
}

// layerMetric is one layer's bytes, both directions, per request.
func layerMetric(key, name string, f func(results.Layers) int64) Metric {
	return Metric{Key: "layer_" + key, CSV: "layer_" + key + "_bytes_per_req", Name: name, Unit: UnitBytes,
		Value: func(t results.Trial) (float64, bool) {
			var in, out results.Layers
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
