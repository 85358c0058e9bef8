package measure

import (
	"encoding/json"
	"fmt"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"
)

// Histogram range: 1 µs to 60 s at 3 significant digits, stored in
// microseconds. A value outside the range is clamped to it, so a stalled
// request still counts (as 60 s) rather than vanishing.
const (
	histMin    = 1
	histMax    = 60_000_000
	histDigits = 3
)

// Histogram is an HdrHistogram of durations. It is not safe for concurrent
// use: each worker owns one and they are merged at the end (grpc-go's
// benchmark worker does the same), which keeps a mutex off the hot path.
//
// It marshals to JSON as its Summary: the headline figures as numbers and
// the HdrHistogram V2 compressed, base64 encoding, so a histogram read back
// from a result file is bucket-for-bucket the one recorded and merges of
// result files are exact.
type Histogram struct {
	h *hdrhistogram.Histogram
}

// NewHistogram returns an empty histogram covering 1 µs..60 s.
func NewHistogram() *Histogram {
	return &Histogram{h: hdrhistogram.New(histMin, histMax, histDigits)}
}

// Record adds one duration.
func (h *Histogram) Record(d time.Duration) {
	us := min(max(int64(d/time.Microsecond), histMin), histMax)
	_ = h.h.RecordValue(us) // cannot fail: us is inside the range
}

// Merge adds every value of o to h. Both cover the same range, so nothing
// is dropped.
func (h *Histogram) Merge(o *Histogram) {
	if o == nil || o.h == nil {
		return
	}
	h.h.Merge(o.h)
}

// Reset empties h.
func (h *Histogram) Reset() { h.h.Reset() }

// Count is the number of recorded values.
func (h *Histogram) Count() int64 { return h.h.TotalCount() }

// Quantile returns the value at q in [0, 1] (0.99 for p99).
func (h *Histogram) Quantile(q float64) time.Duration {
	return time.Duration(h.h.ValueAtQuantile(q*100)) * time.Microsecond
}

// Min, Max and Mean summarize the recorded values.
func (h *Histogram) Min() time.Duration { return time.Duration(h.h.Min()) * time.Microsecond }

// Max is the largest recorded value (to the histogram's precision).
func (h *Histogram) Max() time.Duration { return time.Duration(h.h.Max()) * time.Microsecond }

// Mean is the average of the recorded values.
func (h *Histogram) Mean() time.Duration {
	return time.Duration(h.h.Mean() * float64(time.Microsecond))
}

// Equal reports whether h and o hold the same counts in every bucket.
func (h *Histogram) Equal(o *Histogram) bool { return h.h.Equals(o.h) }

// Summary is a histogram as a result file writes it: its headline
// figures as plain JSON numbers, in milliseconds and in nanoseconds, so
// jq and any JSON reader find them (.latency.p99_ms), beside the encoded
// histogram itself (HDR), which keeps merges and later percentiles exact.
// P999 is the 99.9th percentile. The figures are the histogram's own,
// to its precision (1 µs, 3 significant digits).
type Summary struct {
	Count  int64   `json:"count"`
	MinMs  float64 `json:"min_ms"`
	MeanMs float64 `json:"mean_ms"`
	P50Ms  float64 `json:"p50_ms"`
	P90Ms  float64 `json:"p90_ms"`
	P99Ms  float64 `json:"p99_ms"`
	P999Ms float64 `json:"p999_ms"`
	MaxMs  float64 `json:"max_ms"`
	MinNs  int64   `json:"min_ns"`
	MeanNs int64   `json:"mean_ns"`
	P50Ns  int64   `json:"p50_ns"`
	P90Ns  int64   `json:"p90_ns"`
	P99Ns  int64   `json:"p99_ns"`
	P999Ns int64   `json:"p999_ns"`
	MaxNs  int64   `json:"max_ns"`
	// HDR is the HdrHistogram V2 compressed encoding, base64, in
	// microseconds (1 µs..60 s, 3 digits), which other HdrHistogram tools
	// read as well.
	HDR string `json:"hdr"`
}

// Summary gives h's headline figures and its encoding.
func (h *Histogram) Summary() (Summary, error) {
	enc, err := h.Encode()
	if err != nil {
		return Summary{}, err
	}
	ms := func(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
	s := Summary{Count: h.Count(), HDR: string(enc)}
	for _, f := range []struct {
		d  time.Duration
		ms *float64
		ns *int64
	}{
		{h.Min(), &s.MinMs, &s.MinNs},
		{h.Mean(), &s.MeanMs, &s.MeanNs},
		{h.Quantile(0.50), &s.P50Ms, &s.P50Ns},
		{h.Quantile(0.90), &s.P90Ms, &s.P90Ns},
		{h.Quantile(0.99), &s.P99Ms, &s.P99Ns},
		{h.Quantile(0.999), &s.P999Ms, &s.P999Ns},
		{h.Max(), &s.MaxMs, &s.MaxNs},
	} {
		*f.ms, *f.ns = ms(f.d), int64(f.d)
	}
	return s, nil
}

// Encode returns h in the HdrHistogram V2 compressed encoding (base64).
func (h *Histogram) Encode() ([]byte, error) {
	b, err := h.h.Encode(hdrhistogram.V2CompressedEncodingCookieBase)
	if err != nil {
		return nil, fmt.Errorf("measure: encode histogram: %w", err)
	}
	return b, nil
}

// MarshalJSON writes h as its Summary: plain numbers and the encoding.
func (h *Histogram) MarshalJSON() ([]byte, error) {
	s, err := h.Summary()
	if err != nil {
		return nil, err
	}
	return json.Marshal(s)
}

// UnmarshalJSON reads what MarshalJSON writes, and the bare encoded
// string that result files held before the Summary: only the encoding
// is read, and the figures are computed from it again.
func (h *Histogram) UnmarshalJSON(data []byte) error {
	var s string
	if err := json.Unmarshal(data, &s); err != nil {
		var sum struct {
			HDR *string `json:"hdr"`
		}
		if json.Unmarshal(data, &sum) != nil {
			return fmt.Errorf("%w: %v", ErrDecode, err)
		}
		if sum.HDR == nil {
			return fmt.Errorf("%w: no \"hdr\" encoding", ErrDecode)
		}
		s = *sum.HDR
	}
	d, err := hdrhistogram.Decode([]byte(s))
	if err != nil {
		return fmt.Errorf("%w: %v", ErrDecode, err)
	}
	if d.LowestTrackableValue() != histMin || d.HighestTrackableValue() < histMax ||
		d.SignificantFigures() != histDigits {
		return fmt.Errorf("%w: range %d..%d/%d digits, want %d..%d/%d", ErrDecode,
			d.LowestTrackableValue(), d.HighestTrackableValue(), d.SignificantFigures(),
			histMin, histMax, histDigits)
	}
	h.h = d
	return nil
}
