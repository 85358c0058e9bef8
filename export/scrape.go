package export

import (
	"context"
	"net/http"
	"sync"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/timestamppb"
)

// Scrape is a Sink that keeps the newest snapshot and serves it to
// Prometheus's scrapes: a pull endpoint on the load process
// (--metrics-addr). A scraper that asks for the protobuf format (as
// Prometheus does with native histograms on) gets the latency as native
// histograms of Schema, with exemplars; the text format carries only
// their count and sum. It serves the newest snapshot, so a scrape sees
// the run as of the last --export-interval.
type Scrape struct {
	mu   sync.Mutex
	last *Batch
}

// Name implements Sink.
func (*Scrape) Name() string { return "scrape endpoint" }

// Send implements Sink: it keeps b for the next scrape.
func (s *Scrape) Send(_ context.Context, b *Batch) error {
	s.mu.Lock()
	s.last = b
	s.mu.Unlock()
	return nil
}

// ServeHTTP answers a scrape in the format the scraper asks for.
func (s *Scrape) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	b := s.last
	s.mu.Unlock()
	format := expfmt.NegotiateAccept(r.Header, expfmt.DefaultAcceptedFormats()...)
	w.Header().Set("Content-Type", string(format))
	if b == nil {
		return // no snapshot yet: no series
	}
	enc := expfmt.NewEncoder(w, format)
	for _, mf := range families(b) {
		if err := enc.Encode(mf); err != nil {
			return // the scraper went away mid-answer: nothing to tell it
		}
	}
}

// families converts a batch to metric families, one per name, in the
// order collect made them.
func families(b *Batch) []*dto.MetricFamily {
	var out []*dto.MetricFamily
	byName := map[string]*dto.MetricFamily{}
	for _, m := range b.metrics {
		mf := byName[m.name]
		if mf == nil {
			typ := dto.MetricType_COUNTER
			if m.kind == histKind {
				typ = dto.MetricType_HISTOGRAM
			}
			mf = &dto.MetricFamily{Name: proto.String(m.name), Help: proto.String(m.help), Type: &typ}
			byName[m.name] = mf
			out = append(out, mf)
		}
		dm := &dto.Metric{Label: dtoLabels(b.Labels, m.labels)}
		if m.kind == histKind {
			dm.Histogram = dtoHistogram(m)
		} else {
			dm.Counter = &dto.Counter{Value: proto.Float64(m.value)}
		}
		mf.Metric = append(mf.Metric, dm)
	}
	return out
}

func dtoLabels(run, own []Label) []*dto.LabelPair {
	ls := make([]*dto.LabelPair, 0, len(run)+len(own))
	for _, l := range append(append([]Label(nil), run...), own...) {
		ls = append(ls, &dto.LabelPair{Name: proto.String(l.Name), Value: proto.String(l.Value)})
	}
	return ls
}

// dtoHistogram is m's histogram as client_golang exposes a native one:
// the spans and deltas of nativeHistogram, and the exemplars.
func dtoHistogram(m metric) *dto.Histogram {
	nh := nativeHistogram(m.hist)
	h := &dto.Histogram{SampleCount: proto.Uint64(nh.Count), SampleSum: proto.Float64(nh.Sum),
		Schema: proto.Int32(nh.Schema), ZeroThreshold: proto.Float64(nh.ZeroThreshold), ZeroCount: proto.Uint64(0),
		PositiveDelta: nh.PositiveBuckets}
	for _, sp := range nh.PositiveSpans {
		h.PositiveSpan = append(h.PositiveSpan, &dto.BucketSpan{Offset: proto.Int32(sp.Offset), Length: proto.Uint32(sp.Length)})
	}
	if len(h.PositiveSpan) == 0 {
		// An empty native histogram still says it is one: a span of no
		// buckets (client_golang does the same).
		h.PositiveSpan = []*dto.BucketSpan{{Offset: proto.Int32(0), Length: proto.Uint32(0)}}
	}
	for _, x := range m.ex {
		h.Exemplars = append(h.Exemplars, &dto.Exemplar{
			Label: []*dto.LabelPair{{Name: proto.String("trace_id"), Value: proto.String(x.TraceID)}},
			Value: proto.Float64(x.Latency.Seconds()), Timestamp: timestamppb.New(exemplarTime(x).Truncate(time.Millisecond)),
		})
	}
	return h
}
