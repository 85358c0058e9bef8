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
// It marshals to JSON as the HdrHistogram V2 compressed, base64 encoding, so
// a histogram read back from a result file is bucket-for-bucket the one
// recorded and merges of result files are exact.
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

// MarshalJSON encodes h as a base64 string of the HdrHistogram V2
// compressed format, which other HdrHistogram tools read as well.
func (h *Histogram) MarshalJSON() ([]byte, error) {
	b, err := h.h.Encode(hdrhistogram.V2CompressedEncodingCookieBase)
	if err != nil {
		return nil, fmt.Errorf("measure: encode histogram: %w", err)
	}
	return json.Marshal(string(b))
}

// UnmarshalJSON decodes what MarshalJSON wrote.
func (h *Histogram) UnmarshalJSON(data []byte) error {
	var s string
	if err := json.Unmarshal(data, &s); err != nil {
		return fmt.Errorf("%w: %v", ErrDecode, err)
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
