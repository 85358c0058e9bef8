package measure

import (
	"encoding/json"
	"errors"
	"math/rand/v2"
	"testing"
	"time"
)

func TestHistogramQuantiles(t *testing.T) {
	t.Parallel()
	h := NewHistogram()
	for i := 1; i <= 1000; i++ {
		h.Record(time.Duration(i) * time.Millisecond)
	}
	tests := []struct {
		q    float64
		want time.Duration
	}{
		{0.5, 500 * time.Millisecond},
		{0.99, 990 * time.Millisecond},
		{1, 1000 * time.Millisecond},
	}
	for _, tc := range tests {
		got := h.Quantile(tc.q)
		if d := got - tc.want; d < -tc.want/500 || d > tc.want/500 {
			t.Errorf("q%.2f = %v, want %v ±0.2%%", tc.q, got, tc.want)
		}
	}
	if h.Count() != 1000 {
		t.Errorf("count = %d, want 1000", h.Count())
	}
}

func TestHistogramClamps(t *testing.T) {
	t.Parallel()
	h := NewHistogram()
	h.Record(0)
	h.Record(time.Hour)
	if h.Count() != 2 || h.Min() != time.Microsecond || h.Max() < 59*time.Second {
		t.Errorf("count %d min %v max %v; want 2, 1µs, ~60s", h.Count(), h.Min(), h.Max())
	}
}

// TestHistogramMergeJSON checks that serialization is exact: the merge of
// decoded parts equals the histogram of all values.
func TestHistogramMergeJSON(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(1, 2))
	all, parts := NewHistogram(), []*Histogram{NewHistogram(), NewHistogram(), NewHistogram()}
	for i := range 30000 {
		d := time.Duration(rng.ExpFloat64() * float64(5*time.Millisecond))
		all.Record(d)
		parts[i%3].Record(d)
	}
	merged := NewHistogram()
	for _, p := range parts {
		b, err := json.Marshal(p)
		if err != nil {
			t.Fatal(err)
		}
		var back Histogram
		if err := json.Unmarshal(b, &back); err != nil {
			t.Fatal(err)
		}
		if !back.Equal(p) {
			t.Fatal("decoded histogram differs from encoded one")
		}
		merged.Merge(&back)
	}
	if !merged.Equal(all) || merged.Count() != 30000 {
		t.Fatalf("merged (%d values) differs from single histogram", merged.Count())
	}
}

func TestHistogramDecodeErrors(t *testing.T) {
	t.Parallel()
	for _, in := range []string{`12`, `"not base64!"`, `""`} {
		var h Histogram
		if err := json.Unmarshal([]byte(in), &h); !errors.Is(err, ErrDecode) {
			t.Errorf("Unmarshal(%s) = %v, want ErrDecode", in, err)
		}
	}
}

// TestHistogramSummaryJSON checks that a histogram is written with its
// figures as plain numbers, equal to its own, and read back from that
// form and from the bare encoded string that files held before it.
func TestHistogramSummaryJSON(t *testing.T) {
	t.Parallel()
	h := NewHistogram()
	for i := 1; i <= 1000; i++ {
		h.Record(time.Duration(i) * 10 * time.Microsecond)
	}
	b, err := json.Marshal(h)
	if err != nil {
		t.Fatal(err)
	}
	var doc map[string]any
	if err := json.Unmarshal(b, &doc); err != nil {
		t.Fatal(err)
	}
	for key, d := range map[string]time.Duration{
		"min": h.Min(), "mean": h.Mean(), "p50": h.Quantile(0.5), "p90": h.Quantile(0.9),
		"p99": h.Quantile(0.99), "p999": h.Quantile(0.999), "max": h.Max(),
	} {
		if doc[key+"_ns"] != float64(d) || doc[key+"_ms"] != float64(d)/1e6 {
			t.Errorf("%s: %v ns, %v ms; want %d ns", key, doc[key+"_ns"], doc[key+"_ms"], d)
		}
	}
	if doc["count"] != 1000.0 || doc["p99_ms"].(float64) < 9.9 || doc["p99_ms"].(float64) > 9.91 {
		t.Errorf("count %v, p99 %v ms; want 1000, 9.9", doc["count"], doc["p99_ms"])
	}
	enc, err := json.Marshal(doc["hdr"])
	if err != nil {
		t.Fatal(err)
	}
	for name, in := range map[string][]byte{"summary": b, "bare encoding": enc} {
		var back Histogram
		if err := json.Unmarshal(in, &back); err != nil || !back.Equal(h) {
			t.Errorf("%s: read back %v, equal %v", name, err, err == nil && back.Equal(h))
		}
	}
	var none Histogram
	if err := json.Unmarshal([]byte(`{"p99_ms":1}`), &none); !errors.Is(err, ErrDecode) {
		t.Errorf("a summary without its encoding: %v, want ErrDecode", err)
	}
}
