package export

import "google.golang.org/protobuf/encoding/protowire"

// The remote write 1.0 messages sent (prometheus/prompb's types.proto
// and remote.proto; field numbers in the marshal methods), with what
// prompb's generated code writes: fields in number order, a proto3
// scalar left out when zero, the histogram's count and zero count
// (oneof members) always, deltas packed.

type rwRequest struct{ Timeseries []rwSeries } // WriteRequest

type rwSeries struct { // TimeSeries
	Labels     []Label
	Samples    []rwSample
	Exemplars  []rwExemplar
	Histograms []rwHistogram
}

type rwSample struct { // Sample
	Value     float64
	Timestamp int64 // ms
}

type rwExemplar struct { // Exemplar
	Labels    []Label
	Value     float64
	Timestamp int64 // ms
}

// rwHistogram is an integer native histogram with its timestamp
// (Histogram, as prompb.FromIntHistogram fills it).
type rwHistogram struct {
	*promHistogram
	Timestamp int64 // ms
}

// promHistogram is an integer native histogram with only positive
// buckets (what Prometheus's model/histogram.Histogram holds of ours):
// spans over the non-empty buckets and their counts delta-encoded.
// No counter reset hint: unknown, 0.
type promHistogram struct {
	Schema          int32
	ZeroThreshold   float64
	Count           uint64
	Sum             float64
	PositiveSpans   []bucketSpan
	PositiveBuckets []int64 // deltas
}

type bucketSpan struct { // BucketSpan
	Offset int32
	Length uint32
}

func (r *rwRequest) marshal(b []byte) []byte {
	for i := range r.Timeseries {
		b = appendMessage(b, 1, r.Timeseries[i].marshal)
	}
	return b
}

func (s *rwSeries) marshal(b []byte) []byte {
	b = appendLabels(b, 1, s.Labels)
	for _, x := range s.Samples {
		b = appendMessage(b, 2, func(b []byte) []byte {
			b = appendDouble(b, 1, x.Value, false)
			return appendVarint(b, 2, uint64(x.Timestamp), false)
		})
	}
	for _, x := range s.Exemplars {
		b = appendMessage(b, 3, func(b []byte) []byte {
			b = appendLabels(b, 1, x.Labels)
			b = appendDouble(b, 2, x.Value, false)
			return appendVarint(b, 3, uint64(x.Timestamp), false)
		})
	}
	for _, h := range s.Histograms {
		b = appendMessage(b, 4, h.marshal)
	}
	return b
}

func appendLabels(b []byte, num protowire.Number, ls []Label) []byte {
	for _, l := range ls {
		b = appendMessage(b, num, func(b []byte) []byte {
			b = appendString(b, 1, l.Name)
			return appendString(b, 2, l.Value)
		})
	}
	return b
}

func (h rwHistogram) marshal(b []byte) []byte {
	b = appendVarint(b, 1, h.Count, true) // count_int
	b = appendDouble(b, 3, h.Sum, false)
	b = appendSint(b, 4, int64(h.Schema))
	b = appendDouble(b, 5, h.ZeroThreshold, false)
	b = appendVarint(b, 6, 0, true) // zero_count_int
	for _, sp := range h.PositiveSpans {
		b = appendMessage(b, 11, func(b []byte) []byte {
			b = appendSint(b, 1, int64(sp.Offset))
			return appendVarint(b, 2, uint64(sp.Length), false)
		})
	}
	b = appendPacked(b, 12, h.PositiveBuckets, func(v int64) uint64 { return protowire.EncodeZigZag(v) })
	return appendVarint(b, 15, uint64(h.Timestamp), false)
}
