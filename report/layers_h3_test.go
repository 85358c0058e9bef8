package report

import (
	"testing"

	"github.com/wirebench/wirebench/results"
)

// An HTTP/3 trial's bytes by layer (results.Load.Layers) are metrics per
// request, both directions; layers it has none of are not (no column of
// zeros for HTTP/2 in an h3 cell); a trial without a split has none.
func TestLayerMetricsH3(t *testing.T) {
	metric := func(key string) Metric {
		for _, m := range Metrics {
			if m.Key == key {
				return m
			}
		}
		t.Fatalf("no metric %q", key)
		return Metric{}
	}
	tr := results.Trial{Load: &results.Load{Requests: 4, Layers: &results.Split{
		In:  results.Layers{Message: 400, QUIC: 100, H3Frames: 20, QPACK: 200},
		Out: results.Layers{QUIC: 60, H3Frames: 8, QPACK: 140},
	}}}
	for key, want := range map[string]float64{"layer_message": 100, "layer_quic": 40, "layer_h3_frames": 7, "layer_h3_headers": 85} {
		if got, ok := metric(key).Value(tr); !ok || got != want {
			t.Errorf("%s = %v, %v; want %v", key, got, ok, want)
		}
	}
	if _, ok := metric("layer_h2_frames").Value(tr); ok {
		t.Error("an h3 trial has an HTTP/2 frame metric")
	}
	tr.Load.Layers = nil
	if _, ok := metric("layer_quic").Value(tr); ok {
		t.Error("a trial without a split has a QUIC metric")
	}
}
