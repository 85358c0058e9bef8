package results

import (
	"bytes"
	"math"
	"strings"
	"testing"
	"time"
)

// The log reads back with HdrHistogram's own log reader, with every
// percentile equal to the run's within the histogram's precision.
func TestHdrLogRoundTrip(t *testing.T) {
	res := loadRun()
	var buf bytes.Buffer
	if err := WriteHdrLog(&buf, res); err != nil {
		t.Fatal(err)
	}
	text := buf.String()
	for _, want := range []string{"#[Histogram log format version 1.3]", "#[StartTime: 1773500966 (seconds since epoch), 2026-03-14T15:09:26Z]",
		`"StartTimestamp","Interval_Length","Interval_Max","Interval_Compressed_Histogram"`, "\n0.000000,2.000000,100."} {
		if !strings.Contains(text, want) {
			t.Errorf("log lacks %q:\n%s", want, text)
		}
	}
	h, err := ReadHdrLog(&buf)
	if err != nil {
		t.Fatal(err)
	}
	if h.TotalCount() != res.Latency.Count() {
		t.Fatalf("count %d, want %d", h.TotalCount(), res.Latency.Count())
	}
	checked := 0
	for _, q := range []float64{0.01, 0.5, 0.9, 0.99, 1} {
		got := time.Duration(h.ValueAtQuantile(q * 100))
		want := res.Latency.Quantile(q)
		if math.Abs(float64(got-want)) > 0.002*float64(want) {
			t.Errorf("p%v = %v, want %v", q*100, got, want)
		}
		checked++
	}
	if checked != 5 {
		t.Fatal("quantile loop did not run")
	}
	// The reader adds the base time back: absolute milliseconds.
	if h.StartTimeMs() != res.Start.UnixMilli() || h.EndTimeMs() != res.End.UnixMilli() {
		t.Errorf("interval %d..%d ms, want the run's %d..%d", h.StartTimeMs(), h.EndTimeMs(), res.Start.UnixMilli(), res.End.UnixMilli())
	}
}

func TestHdrLogRefusesGarbage(t *testing.T) {
	if _, err := ReadHdrLog(strings.NewReader("#just a comment\n")); err == nil {
		t.Error("a log without intervals was accepted")
	}
}
