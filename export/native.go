package export

import (
	"math"
	"sort"
	"sync"
	"time"

	"github.com/wirebench/wirebench/measure"
)

// Schema is the resolution of the exported histograms: Prometheus's
// native-histogram schema and OTLP's exponential-histogram scale. Each
// power of two is cut into 2^Schema buckets, so a bucket's upper bound
// is 2^(1/256) ≈ 1.0027 times its lower: 0.27% wide. 8 is the finest
// schema Prometheus accepts; the run's HDR histograms (3 significant
// digits) are finer still (≤ 0.1%), so an exported percentile lies in the
// same 0.27%-wide bucket as the run's own (MaxQuantileError).
const Schema = 8

// MaxQuantileError bounds the relative difference between a quantile
// estimated from an exported histogram (PromQL histogram_quantile, an
// OTLP back end) and the run's own: one bucket of Schema.
var MaxQuantileError = math.Exp2(math.Exp2(-Schema)) - 1

// ZeroThreshold is the exported histograms' zero bucket: nothing the
// run measures is below 1 µs, so the zero bucket stays empty.
const ZeroThreshold = 1e-9

// expBuckets is a histogram in exponential buckets of Schema, in seconds.
// counts[i] counts the bucket whose index, in Prometheus's convention,
// is offset+i: the bucket (2^((k−1)/2^Schema), 2^(k/2^Schema)]. OTLP's
// index of the same bucket is one less.
type expBuckets struct {
	offset int32
	counts []uint64
	count  uint64
	sum    float64 // seconds
	min    float64
	max    float64
}

// bounds are the bucket bounds within [0.5, 1), as Prometheus's client
// (client_golang's nativeHistogramBounds) computes them; made on first
// use, not at init: 2 kB of live heap in every process of the one binary
// otherwise, exporting or not.
var bounds = sync.OnceValue(func() []float64 {
	b := make([]float64, 1<<Schema)
	for i := range b {
		b[i] = math.Exp2(float64(i)/float64(len(b)) - 1)
	}
	return b
})

// bucketIndex is Prometheus's index of the bucket that holds v > 0,
// computed as client_golang computes it, so that a bound falls in the
// bucket it closes, as in Prometheus's own clients.
func bucketIndex(v float64) int32 {
	frac, exp := math.Frexp(v) // v = frac × 2^exp, frac in [0.5, 1)
	b := bounds()
	return int32(sort.SearchFloat64s(b, frac) + (exp-1)*len(b))
}

// toExp converts an HDR histogram. Each HDR bucket's count goes to the
// exponential bucket holding its highest equivalent value — the value
// the run reports for a quantile that falls in it — so a quantile of the
// result lies in the same exponential bucket as the run's.
func toExp(h *measure.Histogram) expBuckets {
	var e expBuckets
	if h == nil || h.Count() == 0 {
		return e
	}
	first := true
	h.Buckets(func(_, hi time.Duration, n int64) {
		v := hi.Seconds()
		k := bucketIndex(v)
		if first {
			e.offset, first = k, false
		}
		for int(k-e.offset) >= len(e.counts) {
			e.counts = append(e.counts, 0)
		}
		e.counts[k-e.offset] += uint64(n)
		e.count += uint64(n)
	})
	e.sum = h.Mean().Seconds() * float64(e.count)
	e.min, e.max = h.Min().Seconds(), h.Max().Seconds()
	return e
}

// upper is the upper bound of Prometheus's bucket k.
func upper(k int32) float64 { return math.Exp2(float64(k) / float64(int(1)<<Schema)) }
