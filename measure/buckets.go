package measure

import "time"

// Buckets calls fn for each non-empty bucket of h, lowest first, with
// the lowest and highest value the bucket stands for and its count
// (for export to other histogram formats, which need the buckets, not
// quantiles).
func (h *Histogram) Buckets(fn func(lo, hi time.Duration, n int64)) {
	for _, b := range h.h.Distribution() {
		if b.Count > 0 {
			fn(time.Duration(b.From)*time.Microsecond, time.Duration(b.To)*time.Microsecond, b.Count)
		}
	}
}
