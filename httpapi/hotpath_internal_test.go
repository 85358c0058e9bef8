package httpapi

import (
	"bytes"
	"maps"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/wirebench/wirebench/codec"
)

// TestCanonicalInt: an id names a user only in FormatInt's spelling of
// the value ParseInt reads; canonicalInt must agree with that round trip
// on every spelling ParseInt accepts.
func TestCanonicalInt(t *testing.T) {
	for _, s := range []string{"0", "-0", "+0", "00", "1", "+1", "01", "-1", "-01", "9", "10", "100", "007",
		"9223372036854775807", "-9223372036854775808", "+9223372036854775807", "09223372036854775807"} {
		id, err := strconv.ParseInt(s, 10, 64)
		if err != nil {
			t.Fatalf("%q does not parse: the table must hold ParseInt's spellings", s)
		}
		if got, want := canonicalInt(s), strconv.FormatInt(id, 10) == s; got != want {
			t.Errorf("canonicalInt(%q) = %v, want %v", s, got, want)
		}
	}
}

// TestRouteCounters: each (route, format, status) counts its own requests,
// resolved once even when goroutines race to add the same pair.
func TestRouteCounters(t *testing.T) {
	m := newMetrics()
	var a, b routeCounters
	const workers, each = 4, 500
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			for range each {
				m.count(&a, "/a", "json", 200)
			}
		})
	}
	wg.Wait()
	for range 3 {
		m.count(&a, "/a", "json", 404)
	}
	for range 2 {
		m.count(&a, "/a", "msgpack", 200)
	}
	m.count(&b, "/b", "json", 200)
	want := map[string]float64{
		"/a json 200": workers * each, "/a json 404": 3, "/a msgpack 200": 2, "/b json 200": 1,
	}
	got := map[string]float64{}
	// Read back with Prometheus' own parser (a test-only dependency).
	p := expfmt.NewTextParser(model.LegacyValidation)
	mfs, err := p.TextToMetricFamilies(bytes.NewReader(m.appendRequests(nil)))
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.GetName() != "wirebench_http_requests_total" {
			continue
		}
		for _, mt := range mf.GetMetric() {
			l := map[string]string{}
			for _, p := range mt.GetLabel() {
				l[p.GetName()] = p.GetValue()
			}
			got[l["route"]+" "+l["format"]+" "+l["status"]] = mt.GetCounter().GetValue()
		}
	}
	if !maps.Equal(got, want) {
		t.Errorf("counters %v, want %v", got, want)
	}
	// client_golang's order: by label values, labels by name.
	var order []string
	for line := range strings.Lines(string(m.appendRequests(nil))) {
		if !strings.HasPrefix(line, "#") {
			order = append(order, line[:strings.LastIndexByte(line, ' ')])
		}
	}
	if wantOrder := []string{
		`wirebench_http_requests_total{format="json",route="/a",status="200"}`,
		`wirebench_http_requests_total{format="json",route="/a",status="404"}`,
		`wirebench_http_requests_total{format="json",route="/b",status="200"}`,
		`wirebench_http_requests_total{format="msgpack",route="/a",status="200"}`,
	}; !slices.Equal(order, wantOrder) {
		t.Errorf("series in order\n%q\nwant\n%q", order, wantOrder)
	}
	if n := len(*a.list.Load()); n != 3 {
		t.Errorf("route /a resolved %d counters, want 3 (one per pair)", n)
	}
}

// TestNegotiationMemo: remembered answers are the parser's, for every
// default format and both answers and refusals; the cache holds at most
// memoEntries values of at most memoKeyLen bytes, and past them answers
// stay right.
func TestNegotiationMemo(t *testing.T) {
	f, err := newFormats("")
	if err != nil {
		t.Fatal(err)
	}
	accepts := []string{"*/*", "application/json", "Application/JSON", "application/msgpack;q=0.5, application/cbor",
		"text/*", "application/*;q=0.9, text/toon", "image/png", "application/x-msgpack", " application/cbor ",
		"*/*;q=0", "application/json;q=0.5, application/msgpack;q=0.5"}
	for _, def := range append(f.canonical(), codec.Entry{}) {
		for _, a := range accepts {
			want, wantErr := f.negotiate(a, map[bool]codec.Entry{true: f.json, false: def}[def.Codec == nil])
			for range 2 { // the second call answers from the cache
				got, err := f.response(a, def)
				if got.Codec != want.Codec || (err == nil) != (wantErr == nil) {
					t.Errorf("response(%q, %v) = %v, %v; negotiate: %v, %v", a, def.MediaTypes, got.MediaTypes, err, want.MediaTypes, wantErr)
				}
			}
		}
	}
	if got := f.accepts.n.Load(); got == 0 || got > memoEntries {
		t.Fatalf("%d remembered Accept values after the table, want 1..%d", got, memoEntries)
	}
	long := strings.Repeat(" ", memoKeyLen-len("application/cbor")) + "application/cbor"
	if e, err := f.response(long, codec.Entry{}); err != nil || e.MediaTypes[0] != "application/cbor" {
		t.Fatalf("a %d-byte Accept: %v %v", len(long), e.MediaTypes, err)
	}
	if _, ok := f.accepts.load(acceptKey{long, f.json.Codec}); !ok {
		t.Errorf("a %d-byte Accept (the longest remembered) was not remembered", len(long))
	}
	if _, err := f.response(" "+long, codec.Entry{}); err != nil {
		t.Fatal(err)
	}
	if _, ok := f.accepts.load(acceptKey{" " + long, f.json.Codec}); ok {
		t.Errorf("a %d-byte Accept was remembered (limit %d)", len(long)+1, memoKeyLen)
	}
	for i := range 2 * memoEntries {
		a := "application/cbor;q=0." + strconv.Itoa(i+1)
		if e, err := f.response(a, codec.Entry{}); err != nil || e.MediaTypes[0] != "application/cbor" {
			t.Fatalf("%q: %v %v", a, e.MediaTypes, err)
		}
	}
	if got := f.accepts.n.Load(); got != memoEntries {
		t.Errorf("%d remembered Accept values, want the bound %d", got, memoEntries)
	}
	n := 0
	f.accepts.m.Range(func(any, any) bool { n++; return true })
	if n != memoEntries {
		t.Errorf("the cache holds %d values, want the bound %d", n, memoEntries)
	}
}

// TestCodingMemo: the same for Accept-Encoding.
func TestCodingMemo(t *testing.T) {
	for _, ae := range []string{"", "gzip", "zstd", "br", "gzip, deflate, br, zstd", "gzip;q=0.5, zstd;q=0.4", "zstd;q=0, gzip", "GZIP", "identity"} {
		want := parseCodings(ae)
		if ae == "" {
			want = codingIdentity
		}
		for range 2 {
			if got := chooseCoding(ae); got != want {
				t.Errorf("chooseCoding(%q) = %q, want %q", ae, got, want)
			}
		}
	}
	if _, ok := codings.load("gzip, deflate, br, zstd"); !ok {
		t.Error("a browser's Accept-Encoding was not remembered")
	}
	edge := strings.Repeat(" ", memoKeyLen-len("zstd")) + "zstd"
	if got := chooseCoding(edge); got != codingZstd {
		t.Errorf("%d-byte Accept-Encoding: %q", len(edge), got)
	}
	if _, ok := codings.load(edge); !ok {
		t.Errorf("a %d-byte Accept-Encoding (the longest remembered) was not remembered", len(edge))
	}
	long := strings.Repeat("x", memoKeyLen) + ", gzip"
	if got := chooseCoding(long); got != codingGzip {
		t.Errorf("long Accept-Encoding: %q", got)
	}
	if _, ok := codings.load(long); ok {
		t.Errorf("a %d-byte Accept-Encoding was remembered (limit %d)", len(long), memoKeyLen)
	}
}
