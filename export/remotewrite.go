package export

import (
	"context"
	"fmt"
	"net/http"
	"slices"
	"strings"

	"github.com/klauspost/compress/snappy"

	"github.com/wirebench/wirebench/results"
)

// RemoteWrite is a Sink that sends Prometheus remote write 1.0 requests
// (snappy-compressed protobuf, prompb's messages, written by
// rwRequest.marshal) with native histograms: the
// receiver needs --web.enable-remote-write-receiver (and, before
// Prometheus 3.8, --enable-feature=native-histograms).
type RemoteWrite struct {
	URL    string
	Client *http.Client // http.DefaultClient if nil
	// sent is, per histogram series, the exemplars already sent (by
	// trace ID) and the timestamp of the newest: Prometheus keeps an
	// exemplar only if it is newer than the series' newest.
	sent map[string]*sentExemplars
	// known holds the series the receiver has taken samples of.
	known map[string]bool
}

type sentExemplars struct {
	ids    map[string]bool
	newest int64 // ms
}

// NewRemoteWrite returns a sink that writes to url
// (http://host:9090/api/v1/write).
func NewRemoteWrite(url string) (*RemoteWrite, error) {
	if !strings.HasPrefix(url, "http://") && !strings.HasPrefix(url, "https://") {
		return nil, fmt.Errorf("%w: remote write URL %q: want http(s)://host:port/api/v1/write", ErrExport, url)
	}
	return &RemoteWrite{URL: url, sent: map[string]*sentExemplars{}, known: map[string]bool{}}, nil
}

// Name implements Sink.
func (*RemoteWrite) Name() string { return "prometheus remote write" }

// Send implements Sink.
func (s *RemoteWrite) Send(ctx context.Context, b *Batch) error {
	req, late := s.request(b)
	if err := s.write(ctx, req); err != nil {
		return err
	}
	for _, ts := range req.Timeseries {
		s.known[seriesKey(ts.Labels)] = true
	}
	if len(late.Timeseries) == 0 {
		return nil
	}
	return s.write(ctx, late)
}

func (s *RemoteWrite) write(ctx context.Context, req *rwRequest) error {
	raw := req.marshal(nil)
	c := s.Client
	if c == nil {
		c = http.DefaultClient
	}
	return post(ctx, c, s.URL, snappy.Encode(nil, raw), map[string]string{
		"Content-Type":                      "application/x-protobuf",
		"Content-Encoding":                  "snappy",
		"X-Prometheus-Remote-Write-Version": "0.1.0",
		"User-Agent":                        "wirebench",
	})
}

// request converts a batch into a write request: one series per metric,
// each with one sample (counters) or one native histogram, and the
// histogram's exemplars not yet sent. Prometheus's receiver adds a
// series' exemplars before its samples, to a series it must already
// have: the exemplars of a series new to the receiver go in late, a
// second request of exemplars alone, sent once the first has made the
// series.
func (s *RemoteWrite) request(b *Batch) (req, late *rwRequest) {
	ts := b.At.UnixMilli()
	req, late = &rwRequest{}, &rwRequest{}
	for _, m := range b.metrics {
		series := rwSeries{Labels: promLabels(m.name, b.Labels, m.labels)}
		switch m.kind {
		case histKind:
			series.Histograms = []rwHistogram{{nativeHistogram(m.hist), ts}}
			key := seriesKey(series.Labels)
			ex := s.newExemplars(key, m.ex)
			switch {
			case len(ex) == 0:
			case s.known[key]:
				series.Exemplars = ex
			default:
				late.Timeseries = append(late.Timeseries, rwSeries{Labels: series.Labels, Exemplars: ex})
			}
		default:
			series.Samples = []rwSample{{Value: m.value, Timestamp: ts}}
		}
		req.Timeseries = append(req.Timeseries, series)
	}
	return req, late
}

// promLabels are a series' labels, sorted by name as remote write wants.
func promLabels(name string, run, own []Label) []Label {
	ls := slices.Concat([]Label{{Name: "__name__", Value: name}}, run, own)
	slices.SortFunc(ls, func(a, b Label) int { return strings.Compare(a.Name, b.Name) })
	return ls
}

func seriesKey(ls []Label) string {
	var b strings.Builder
	for _, l := range ls {
		b.WriteString(l.Name)
		b.WriteByte(0)
		b.WriteString(l.Value)
		b.WriteByte(0)
	}
	return b.String()
}

// nativeHistogram is e as a Prometheus integer native histogram: spans
// over the non-empty buckets (a gap of empty ones costs a span), counts
// delta-encoded.
func nativeHistogram(e expBuckets) *promHistogram {
	h := &promHistogram{Schema: Schema, ZeroThreshold: ZeroThreshold, Count: e.count, Sum: e.sum}
	var prev int64
	last := int32(0)
	for i, c := range e.counts {
		if c == 0 {
			continue
		}
		k := e.offset + int32(i)
		switch n := len(h.PositiveSpans); {
		case n == 0:
			h.PositiveSpans = append(h.PositiveSpans, bucketSpan{Offset: k, Length: 1})
		case k == last+1:
			h.PositiveSpans[n-1].Length++
		default:
			h.PositiveSpans = append(h.PositiveSpans, bucketSpan{Offset: k - last - 1, Length: 1})
		}
		h.PositiveBuckets = append(h.PositiveBuckets, int64(c)-prev)
		prev, last = int64(c), k
	}
	return h
}

// newExemplars are the exemplars of es (oldest first) not yet sent on a
// series. Prometheus refuses an exemplar not newer than the series'
// newest one — two requests that ended in the same millisecond, or a
// request recorded just after a snapshot that already carried a later
// one — so a timestamp is moved to 1 ms past the newest when it must:
// the trace ID is what matters, and the run's --out keeps the exact
// times. The IDs remembered are only those still in es: an exemplar the
// run has dropped never comes back.
func (s *RemoteWrite) newExemplars(key string, es []results.Exemplar) []rwExemplar {
	if len(es) == 0 {
		return nil
	}
	st := s.sent[key]
	if st == nil {
		st = &sentExemplars{ids: map[string]bool{}}
		s.sent[key] = st
	}
	var out []rwExemplar
	ids := make(map[string]bool, len(es))
	for _, e := range es {
		ids[e.TraceID] = true
		if st.ids[e.TraceID] {
			continue
		}
		at := max(exemplarTime(e).UnixMilli(), st.newest+1)
		st.newest = at
		out = append(out, rwExemplar{
			Labels: []Label{{Name: "trace_id", Value: e.TraceID}},
			Value:  e.Latency.Seconds(), Timestamp: at,
		})
	}
	st.ids = ids
	return out
}
