package export

import (
	"bytes"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/timestamppb"

	"github.com/wirebench/wirebench/measure"
	"github.com/wirebench/wirebench/results"
)

// acceptHeaders are scrapers' Accept headers: Prometheus 3's defaults
// with and without native histograms, curl's, none, the protobuf debug
// renderings, q and escaping cases, malformed clauses.
var acceptHeaders = []string{
	"",
	"*/*",
	"text/plain",
	"text/plain;version=0.0.4",
	"text/*",
	"application/vnd.google.protobuf;proto=io.prometheus.client.MetricFamily;encoding=delimited;q=0.6,application/openmetrics-text;version=1.0.0;q=0.5,application/openmetrics-text;version=0.0.1;q=0.4,text/plain;version=1.0.0;escaping=allow-utf-8;q=0.3,text/plain;version=0.0.4;q=0.2,*/*;q=0.1",
	"application/openmetrics-text;version=1.0.0;escaping=allow-utf-8;q=0.5,application/openmetrics-text;version=0.0.1;q=0.4,text/plain;version=1.0.0;escaping=allow-utf-8;q=0.3,text/plain;version=0.0.4;q=0.2,*/*;q=0.1",
	"application/vnd.google.protobuf; proto=io.prometheus.client.MetricFamily; encoding=delimited",
	"application/vnd.google.protobuf; proto=io.prometheus.client.MetricFamily; encoding=text",
	"application/vnd.google.protobuf; proto=io.prometheus.client.MetricFamily; encoding=compact-text",
	"text/plain;q=0.5, application/vnd.google.protobuf;proto=io.prometheus.client.MetricFamily;encoding=delimited;escaping=dots",
	"*/*;proto=io.prometheus.client.MetricFamily;encoding=delimited;escaping=values, text/plain;escaping=bogus",
	"text/plain;escaping=allow-utf-8;q=0.1,application/json",
	"a/b/c, text/plain/, x/, */, ;q=1, text/plain;q=, text/plain;k==, text/plain;version=0.0.4=, text/plain;q=nan",
	",,,text/plain;;;version=0.0.4;",
}

// TestScrapeBytesAreExpfmts: for each Accept header, the content type and
// body served are byte for byte what prometheus/common's expfmt
// negotiated and wrote from client_model's types (the endpoint's code
// before, referenceFamilies), but for the protobuf debug renderings,
// answered in text: counters, escapes in help and label values, a
// histogram with spans and exemplars, an empty one.
func TestScrapeBytesAreExpfmts(t *testing.T) {
	h := measure.NewHistogram()
	for i := range 3_000 {
		h.Record(time.Duration(50+i*i%90_000) * time.Microsecond)
	}
	t0 := time.Unix(1_800_000_000, 987_654_321)
	l := &results.Load{Start: t0, End: t0.Add(5 * time.Second), Requests: h.Count(),
		Ops:      []results.Op{{Name: `GET "/a\b"` + "\n", Requests: h.Count(), Latency: h}, {Name: "PUT", Latency: measure.NewHistogram()}},
		Failures: map[string]int64{"timeout": 0}, Status: map[string]int64{"200": h.Count()},
		Exemplars: &results.Exemplars{Slowest: []results.Exemplar{
			{TraceID: "4bf92f3577b34da6a3ce929d0e0e4736", Op: `GET "/a\b"` + "\n", Start: t0, Latency: h.Max()},
			{TraceID: "x", Op: `GET "/a\b"` + "\n", Start: t0.Add(time.Second), Latency: 1500 * time.Microsecond},
		}}}
	b := &Batch{At: l.End, Labels: []Label{{"run", "r1"}}, metrics: collect(l, 2)}
	sc := &Scrape{}
	if err := sc.Send(t.Context(), b); err != nil {
		t.Fatal(err)
	}
	formats := map[expfmt.FormatType]bool{}
	for _, accept := range acceptHeaders {
		r := httptest.NewRequest(http.MethodGet, "/metrics", nil)
		if accept != "" {
			r.Header.Set("Accept", accept)
		}
		w := httptest.NewRecorder()
		sc.ServeHTTP(w, r)

		format := expfmt.NegotiateAccept(r.Header, expfmt.DefaultAcceptedFormats()...)
		formats[format.FormatType()] = true
		format = debugAsText(format)
		var want bytes.Buffer
		enc := expfmt.NewEncoder(&want, format)
		for _, mf := range referenceFamilies(b) {
			if err := enc.Encode(mf); err != nil {
				t.Fatal(err)
			}
		}
		if got := w.Header().Get("Content-Type"); got != string(format) {
			t.Errorf("Accept %q: content type %q, want %q", accept, got, format)
		}
		if !bytes.Equal(w.Body.Bytes(), want.Bytes()) {
			t.Errorf("Accept %q (%s): %d bytes differ from expfmt's %d:\n got %q\nwant %q", accept, format, w.Body.Len(), want.Len(), w.Body.Bytes(), want.Bytes())
		}
	}
	for _, f := range []expfmt.FormatType{expfmt.TypeTextPlain, expfmt.TypeProtoDelim, expfmt.TypeProtoText, expfmt.TypeProtoCompact} {
		if !formats[f] {
			t.Errorf("no Accept header negotiated format type %v", f)
		}
	}
}

// FuzzNegotiate: any Accept header negotiates what expfmt's NegotiateAccept
// does with its default formats (the protobuf debug renderings as text).
func FuzzNegotiate(f *testing.F) {
	for _, a := range acceptHeaders {
		f.Add(a)
	}
	f.Fuzz(func(t *testing.T, accept string) {
		h := http.Header{}
		h.Set("Accept", accept)
		want := debugAsText(expfmt.NegotiateAccept(h, expfmt.DefaultAcceptedFormats()...))
		delimited, got := negotiate(h.Get("Accept"))
		if got != string(want) || delimited != (want.FormatType() == expfmt.TypeProtoDelim) {
			t.Errorf("Accept %q: %q (delimited %v), expfmt %q", accept, got, delimited, want)
		}
	})
}

// debugAsText is f, or the text format with f's escaping if f is one of
// the protobuf debug renderings, which the endpoint answers in text.
func debugAsText(f expfmt.Format) expfmt.Format {
	switch f.FormatType() {
	case expfmt.TypeProtoText, expfmt.TypeProtoCompact:
		_, esc, _ := strings.Cut(string(f), "; escaping=")
		return expfmt.FmtText + expfmt.Format("; escaping="+esc)
	}
	return f
}

// referenceFamilies is the batch as client_model's metric families, as the
// endpoint built them before it wrote them itself.
func referenceFamilies(b *Batch) []*dto.MetricFamily {
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
		var ls []*dto.LabelPair
		for _, l := range append(append([]Label(nil), b.Labels...), m.labels...) {
			ls = append(ls, &dto.LabelPair{Name: proto.String(l.Name), Value: proto.String(l.Value)})
		}
		dm := &dto.Metric{Label: ls}
		if m.kind == histKind {
			nh := nativeHistogram(m.hist)
			h := &dto.Histogram{SampleCount: proto.Uint64(nh.Count), SampleSum: proto.Float64(nh.Sum),
				Schema: proto.Int32(nh.Schema), ZeroThreshold: proto.Float64(nh.ZeroThreshold), ZeroCount: proto.Uint64(0),
				PositiveDelta: nh.PositiveBuckets}
			for _, sp := range nh.PositiveSpans {
				h.PositiveSpan = append(h.PositiveSpan, &dto.BucketSpan{Offset: proto.Int32(sp.Offset), Length: proto.Uint32(sp.Length)})
			}
			if len(h.PositiveSpan) == 0 {
				h.PositiveSpan = []*dto.BucketSpan{{Offset: proto.Int32(0), Length: proto.Uint32(0)}}
			}
			for _, x := range m.ex {
				h.Exemplars = append(h.Exemplars, &dto.Exemplar{
					Label: []*dto.LabelPair{{Name: proto.String("trace_id"), Value: proto.String(x.TraceID)}},
					Value: proto.Float64(x.Latency.Seconds()), Timestamp: timestamppb.New(exemplarTime(x).Truncate(time.Millisecond)),
				})
			}
			dm.Histogram = h
		} else {
			dm.Counter = &dto.Counter{Value: proto.Float64(m.value)}
		}
		mf.Metric = append(mf.Metric, dm)
	}
	return out
}
