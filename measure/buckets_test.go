package measure

import (
	"testing"
	"time"
)

// TestBucketsCoverEveryValue: the buckets come lowest first, are not
// empty, add up to the count, and each recorded value lies in the
// bucket that counts it (the one value of each here has a bucket of
// its own: they are far apart).
func TestBucketsCoverEveryValue(t *testing.T) {
	h := NewHistogram()
	values := []time.Duration{time.Microsecond, 150 * time.Microsecond, 3 * time.Millisecond, 2 * time.Second}
	for i, v := range values {
		for range i + 1 {
			h.Record(v)
		}
	}
	var total int64
	var prevHi time.Duration
	i := 0
	h.Buckets(func(lo, hi time.Duration, n int64) {
		switch {
		case i >= len(values):
			t.Fatalf("bucket %d [%v, %v]: more buckets than values", i, lo, hi)
		case n != int64(i+1):
			t.Errorf("bucket [%v, %v] counts %d, want %d", lo, hi, n, i+1)
		case lo > values[i] || values[i] > hi:
			t.Errorf("bucket [%v, %v] does not hold %v", lo, hi, values[i])
		case lo <= prevHi:
			t.Errorf("bucket [%v, %v] overlaps the previous (up to %v)", lo, hi, prevHi)
		}
		// 3 significant digits: a bucket is at most 0.1% of its values wide.
		if float64(hi-lo) > 0.001*float64(hi)+float64(time.Microsecond) {
			t.Errorf("bucket [%v, %v] wider than 0.1%%", lo, hi)
		}
		total += n
		prevHi = hi
		i++
	})
	if i != len(values) || total != h.Count() {
		t.Errorf("%d buckets with %d values, want %d with %d", i, total, len(values), h.Count())
	}
}

func TestBucketsOfAnEmptyHistogram(t *testing.T) {
	NewHistogram().Buckets(func(lo, hi time.Duration, n int64) {
		t.Errorf("empty histogram has bucket [%v, %v] of %d", lo, hi, n)
	})
}
