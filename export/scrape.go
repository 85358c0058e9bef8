package export

import (
	"context"
	"net/http"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"google.golang.org/protobuf/encoding/protowire"

	"github.com/wirebench/wirebench/promtext"
)

// Scrape is a Sink that keeps the newest snapshot and serves it to
// Prometheus's scrapes: a pull endpoint on the load process
// (--metrics-addr). A scraper that asks for the protobuf format (as
// Prometheus does with native histograms on) gets the latency as native
// histograms of Schema, with exemplars; the text format carries only
// their count and sum. It serves the newest snapshot, so a scrape sees
// the run as of the last --export-interval.
//
// Both formats are written here, byte for byte as prometheus/common's
// expfmt writes them from client_model's types (the tests hold them to
// it), without those packages: their descriptor registrations and
// tables were ~16 kB of live heap in every process of the one binary
// (wire.go). One difference: the two debugging renderings of the
// protobuf format (encoding=text and compact-text) are answered in the
// text format.
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
	delimited, contentType := negotiate(r.Header.Get("Accept"))
	w.Header().Set("Content-Type", contentType)
	if b == nil {
		return // no snapshot yet: no series
	}
	var out []byte
	for _, f := range families(b) {
		if delimited {
			out = f.appendDelimited(out)
		} else {
			out = f.appendText(out)
		}
	}
	_, _ = w.Write(out) // a scraper gone mid-answer: nothing to tell it
}

// The media types served, as expfmt names them (FmtProtoDelim, FmtText).
const (
	delimitedType = "application/vnd.google.protobuf; proto=io.prometheus.client.MetricFamily; encoding=delimited"
	textType      = "text/plain; version=0.0.4; charset=utf-8"
)

// negotiate picks the format for an Accept header as expfmt's
// NegotiateAccept does with its DefaultAcceptedFormats (delimited
// protobuf, protobuf text, compact protobuf text, text, in that order of
// preference): the first clause, best first, that one of them matches,
// else text; the content type carries the name escaping scheme, the
// last valid one a clause up to the match asked for, else underscores.
// It reports whether the answer is delimited protobuf, and its content
// type.
func negotiate(accept string) (delimited bool, contentType string) {
	escaping := "underscores"
	for _, c := range parseAccept(accept) {
		switch e := c.params["escaping"]; e {
		case "allow-utf-8", "underscores", "dots", "values":
			escaping = e
		}
		if c.is("application", "vnd.google.protobuf") && c.params["proto"] == "io.prometheus.client.MetricFamily" {
			switch c.params["encoding"] {
			case "delimited":
				return true, delimitedType + "; escaping=" + escaping
			case "text", "compact-text":
				return false, textType + "; escaping=" + escaping
			}
		}
		version := c.params["version"]
		if version == "" && c.typ == "text" && c.sub == "plain" {
			version = "0.0.4"
		}
		if c.is("text", "plain") && version == "0.0.4" {
			return false, textType + "; escaping=" + escaping
		}
	}
	return false, textType + "; escaping=" + escaping
}

// acceptClause is one media range of an Accept header.
type acceptClause struct {
	typ, sub string
	q        float64
	params   map[string]string
}

// is reports whether the clause's range includes typ/sub.
func (c acceptClause) is(typ, sub string) bool {
	return (c.typ == "*" || c.typ == typ) && (c.sub == "*" || c.sub == sub)
}

// parseAccept splits an Accept header into clauses, best first, as
// github.com/munnerz/goautoneg's ParseAccept does (which expfmt uses):
// a clause without a subtype is dropped unless it is *, a parameter
// without a value ignored, q read as a 32-bit float (0 if malformed),
// and the same sort.
func parseAccept(header string) []acceptClause {
	var out []acceptClause
	for part := range strings.SplitSeq(header, ",") {
		if header == "" {
			break
		}
		part = strings.Trim(part, " ")
		c := acceptClause{q: 1}
		media, rest, hasParams := strings.Cut(part, ";")
		typ, sub, hasSub := strings.Cut(media, "/")
		c.typ = strings.Trim(typ, " ")
		switch {
		case !hasSub || sub == "":
			if c.typ != "*" {
				continue
			}
			c.sub = "*"
		default:
			sub, extra, _ := strings.Cut(sub, "/")
			if extra != "" {
				continue // a/b/c; but a/b/ passes as a/b
			}
			c.sub = strings.Trim(sub, " ")
		}
		if hasParams && rest != "" {
			c.params = map[string]string{}
			for p := range strings.SplitSeq(rest, ";") {
				k, rest, found := strings.Cut(p, "=")
				if !found || rest == "" {
					continue // k, k=
				}
				v, extra, _ := strings.Cut(rest, "=")
				if extra != "" {
					continue // k=v=w; but k=v= passes as k=v, k== as k=""
				}
				if k = strings.Trim(k, " "); k == "q" {
					c.q, _ = strconv.ParseFloat(v, 32)
				} else {
					c.params[k] = strings.Trim(v, " ")
				}
			}
		}
		out = append(out, c)
	}
	sort.Sort(byPreference(out))
	return out
}

// byPreference is goautoneg's order: higher q, then a concrete type or
// subtype before *. (Not a strict order: sort.Sort's result is what
// goautoneg's is only because the comparison and the sort are the same.)
type byPreference []acceptClause

func (s byPreference) Len() int      { return len(s) }
func (s byPreference) Swap(i, j int) { s[i], s[j] = s[j], s[i] }
func (s byPreference) Less(i, j int) bool {
	a, b := s[i], s[j]
	return a.q > b.q || a.typ != "*" && b.typ == "*" || a.sub != "*" && b.sub == "*"
}

// family is one metric family of a scrape: client_model's MetricFamily
// with what families fills in.
type family struct {
	name, help string
	histogram  bool // else a counter
	metrics    []familyMetric
}

type familyMetric struct {
	labels []Label
	value  float64 // a counter's
	m      metric  // a histogram's
}

// families converts a batch to metric families, one per name, in the
// order collect made them.
func families(b *Batch) []*family {
	var out []*family
	byName := map[string]*family{}
	for _, m := range b.metrics {
		f := byName[m.name]
		if f == nil {
			f = &family{name: m.name, help: m.help, histogram: m.kind == histKind}
			byName[m.name] = f
			out = append(out, f)
		}
		f.metrics = append(f.metrics, familyMetric{labels: slices.Concat(b.Labels, m.labels), value: m.value, m: m})
	}
	return out
}

// appendText appends f in the text format 0.0.4, as expfmt's
// MetricFamilyToText does: a histogram as its +Inf bucket (the native
// buckets have no place there), sum and count.
func (f *family) appendText(b []byte) []byte {
	typ := promtext.Counter
	if f.histogram {
		typ = "histogram"
	}
	b = promtext.AppendHeader(b, f.name, f.help, typ)
	for _, fm := range f.metrics {
		ls := make([]string, 0, 2*len(fm.labels)+2)
		for _, l := range fm.labels {
			ls = append(ls, l.Name, l.Value)
		}
		if !f.histogram {
			b = promtext.AppendFloat(b, f.name, fm.value, ls...)
			continue
		}
		h := nativeHistogram(fm.m.hist)
		b = promtext.AppendFloat(b, f.name+"_bucket", float64(h.Count), append(ls, "le", "+Inf")...)
		b = promtext.AppendFloat(b, f.name+"_sum", h.Sum, ls...)
		b = promtext.AppendFloat(b, f.name+"_count", float64(h.Count), ls...)
	}
	return b
}

// appendDelimited appends f as a length-prefixed MetricFamily (client
// model's metrics.proto, proto2: a field set is written even when zero;
// repeated numbers unpacked), in field order, as protodelim writes it.
func (f *family) appendDelimited(b []byte) []byte {
	var mf []byte
	mf = appendString2(mf, 1, f.name)
	mf = appendString2(mf, 2, f.help)
	typ := uint64(0) // COUNTER
	if f.histogram {
		typ = 4 // HISTOGRAM
	}
	mf = appendVarint(mf, 3, typ, true)
	for _, fm := range f.metrics {
		mf = appendMessage(mf, 4, func(b []byte) []byte { // Metric
			for _, l := range fm.labels {
				b = appendLabelPair(b, 1, l)
			}
			if !f.histogram {
				return appendMessage(b, 3, func(b []byte) []byte { // Counter
					return appendDouble(b, 1, fm.value, true)
				})
			}
			return appendMessage(b, 7, func(b []byte) []byte { return appendDTOHistogram(b, fm.m) })
		})
	}
	b = protowire.AppendVarint(b, uint64(len(mf)))
	return append(b, mf...)
}

// appendDTOHistogram appends m's histogram as client_golang exposes a
// native one: count, sum, schema, zero bucket, spans (one empty span
// when there are none: a histogram without it reads as a classic one),
// deltas, and the exemplars with their trace IDs.
func appendDTOHistogram(b []byte, m metric) []byte {
	nh := nativeHistogram(m.hist)
	b = appendVarint(b, 1, nh.Count, true)
	b = appendDouble(b, 2, nh.Sum, true)
	b = appendVarint(b, 5, protowire.EncodeZigZag(int64(nh.Schema)), true)
	b = appendDouble(b, 6, nh.ZeroThreshold, true)
	b = appendVarint(b, 7, 0, true) // zero_count
	spans := nh.PositiveSpans
	if len(spans) == 0 {
		spans = []bucketSpan{{}}
	}
	for _, sp := range spans {
		b = appendMessage(b, 12, func(b []byte) []byte {
			b = appendVarint(b, 1, protowire.EncodeZigZag(int64(sp.Offset)), true)
			return appendVarint(b, 2, uint64(sp.Length), true)
		})
	}
	for _, d := range nh.PositiveBuckets {
		b = appendVarint(b, 13, protowire.EncodeZigZag(d), true)
	}
	for _, x := range m.ex {
		b = appendMessage(b, 16, func(b []byte) []byte { // Exemplar
			b = appendLabelPair(b, 1, Label{"trace_id", x.TraceID})
			b = appendDouble(b, 2, x.Latency.Seconds(), true)
			at := exemplarTime(x).Truncate(time.Millisecond)
			return appendMessage(b, 3, func(b []byte) []byte { // google.protobuf.Timestamp
				b = appendVarint(b, 1, uint64(at.Unix()), false)
				return appendVarint(b, 2, uint64(int64(at.Nanosecond())), false)
			})
		})
	}
	return b
}

// appendLabelPair appends a LabelPair (both fields set: written even if empty).
func appendLabelPair(b []byte, num protowire.Number, l Label) []byte {
	return appendMessage(b, num, func(b []byte) []byte {
		b = appendString2(b, 1, l.Name)
		return appendString2(b, 2, l.Value)
	})
}

// appendString2 appends a proto2 string field that is set: written even
// when empty.
func appendString2(b []byte, num protowire.Number, s string) []byte {
	b = protowire.AppendTag(b, num, protowire.BytesType)
	return protowire.AppendString(b, s)
}
