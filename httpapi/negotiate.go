package httpapi

import (
	"fmt"
	"mime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/wirebench/wirebench/api"
	"github.com/wirebench/wirebench/codec"
)

// formats maps media types to the codecs this server speaks. It is the
// registry's table with application/json bound to the chosen JSON library.
type formats struct {
	byMedia map[string]codec.Entry
	json    codec.Entry
	// jsonTo is json's codec as a BufferMarshaler (nil if it is not one),
	// asserted once here rather than on every reply (issue 54).
	jsonTo codec.BufferMarshaler
	// accepts remembers response's answers: clients send the same few
	// Accept values on every request.
	accepts memo[acceptKey, negotiated]
}

type acceptKey struct {
	accept string
	def    codec.Codec
}

type negotiated struct {
	e   codec.Entry
	err error
}

// Bounds of each negotiation cache (memo): entries, and the longest header
// value remembered. Real clients send one or a few fixed values, so a few
// remembered cover every run; past the bounds (a client sending ever new
// or huge values) headers are parsed every time, as without a cache.
const (
	memoEntries = 64
	memoKeyLen  = 256
)

// memo is a bounded cache of a pure function of header values: a lookup
// costs a sync.Map load, where parsing a header splits and lower-cases it.
type memo[K comparable, V any] struct {
	m sync.Map
	n atomic.Int64 // entries stored
}

func (c *memo[K, V]) load(k K) (V, bool) {
	v, ok := c.m.Load(k)
	if !ok {
		var zero V
		return zero, false
	}
	return v.(V), true
}

// store remembers v for k unless memoEntries are stored already.
func (c *memo[K, V]) store(k K, v V) {
	if c.n.Add(1) > memoEntries {
		c.n.Add(-1)
		return
	}
	if _, loaded := c.m.LoadOrStore(k, v); loaded {
		c.n.Add(-1)
	}
}

func newFormats(jsonLib string) (*formats, error) {
	f := &formats{byMedia: map[string]codec.Entry{}}
	for _, name := range codec.Names() {
		e := codec.MustLookup(name)
		for _, mt := range e.MediaTypes {
			if d, ok := codec.ForMediaType(mt); ok && d.Codec.Name() == name {
				f.byMedia[mt] = e
			}
		}
	}
	name := map[string]string{"": "json", "std": "json", "fast": "json-fast"}[jsonLib]
	if name == "" {
		return nil, fmt.Errorf("httpapi: unknown JSON library %q (want std or fast)", jsonLib)
	}
	f.json = codec.MustLookup(name)
	f.byMedia[codec.MediaJSON] = f.json
	f.jsonTo, _ = f.json.Codec.(codec.BufferMarshaler)
	return f, nil
}

// request returns the codec for a Content-Type header.
func (f *formats) request(contentType string) (codec.Entry, error) {
	if contentType == "" {
		return codec.Entry{}, fmt.Errorf("%w: Content-Type is required", api.ErrUnsupportedType)
	}
	if e, ok := f.byMedia[contentType]; ok {
		return e, nil // a bare media type, as clients send it: nothing to parse
	}
	e, ok := f.byMedia[codec.BaseMediaType(contentType)]
	if !ok {
		return codec.Entry{}, fmt.Errorf("%w: %q (supported: %s)", api.ErrUnsupportedType, contentType, f.supported())
	}
	if strings.IndexByte(contentType, ';') >= 0 {
		if err := checkCharset(contentType); err != nil {
			return codec.Entry{}, err
		}
	}
	return e, nil
}

// checkCharset refuses a Content-Type whose parameters do not parse or
// whose charset is anything but UTF-8: every format we decode is UTF-8
// (or binary), and decoding UTF-16 text as UTF-8 would silently store
// garbage.
func checkCharset(contentType string) error {
	_, params, err := mime.ParseMediaType(contentType)
	if err != nil {
		return fmt.Errorf("%w: Content-Type %q: %v", api.ErrUnsupportedType, contentType, err)
	}
	if cs, ok := params["charset"]; ok && !strings.EqualFold(cs, "utf-8") {
		return fmt.Errorf("%w: Content-Type %q: charset %q (only utf-8 is accepted)", api.ErrUnsupportedType, contentType, cs)
	}
	return nil
}

// response picks the codec for an Accept header: the acceptable media type
// with the highest q, the request's format breaking ties and answering
// wildcards and an absent header (DESIGN: response format defaults to the
// request's), JSON when there was no request body.
func (f *formats) response(accept string, def codec.Entry) (codec.Entry, error) {
	if def.Codec == nil {
		def = f.json
	}
	if accept == "" || accept == "*/*" {
		return def, nil
	}
	if e, ok := f.byMedia[accept]; ok {
		return e, nil // one bare media type, q=1
	}
	k := acceptKey{accept, def.Codec}
	if n, ok := f.accepts.load(k); ok {
		return n.e, n.err
	}
	e, err := f.negotiate(accept, def)
	if len(accept) <= memoKeyLen {
		f.accepts.store(k, negotiated{e, err})
	}
	return e, err
}

// negotiate parses accept for response.
func (f *formats) negotiate(accept string, def codec.Entry) (codec.Entry, error) {
	var best codec.Entry
	bestQ := 0.0
	for part := range strings.SplitSeq(accept, ",") {
		mt, q := parseRange(part)
		if q <= 0 || q < bestQ {
			continue
		}
		var e codec.Entry
		switch {
		case mt == "*/*":
			e = def
		case strings.HasSuffix(mt, "/*"):
			if strings.HasPrefix(def.MediaTypes[0], mt[:len(mt)-1]) {
				e = def
			} else {
				e = f.firstWithPrefix(mt[:len(mt)-1])
			}
		default:
			e = f.byMedia[mt]
		}
		if e.Codec == nil {
			continue
		}
		if q > bestQ || (q == bestQ && e.Codec == def.Codec) {
			best, bestQ = e, q
		}
	}
	if best.Codec == nil {
		return codec.Entry{}, fmt.Errorf("%w: Accept %q (supported: %s)", api.ErrNotAcceptable, accept, f.supported())
	}
	return best, nil
}

func (f *formats) firstWithPrefix(prefix string) codec.Entry {
	for _, e := range f.canonical() {
		if strings.HasPrefix(e.MediaTypes[0], prefix) {
			return e
		}
	}
	return codec.Entry{}
}

// canonical lists one entry per format in a fixed order.
func (f *formats) canonical() []codec.Entry {
	var out []codec.Entry
	for _, mt := range []string{codec.MediaJSON, "text/toon", "application/x-protobuf", "application/msgpack", "application/cbor"} {
		if e, ok := f.byMedia[mt]; ok {
			out = append(out, e)
		}
	}
	return out
}

func (f *formats) supported() string {
	var names []string
	for _, e := range f.canonical() {
		names = append(names, e.MediaTypes...)
	}
	return strings.Join(names, ", ")
}

// parseRange parses one element of an Accept or Accept-Encoding header into
// its lower-cased value and q (1 when absent, 0 when malformed).
func parseRange(s string) (string, float64) {
	value, params, _ := strings.Cut(s, ";")
	value = strings.ToLower(strings.TrimSpace(value))
	q := 1.0
	for p := range strings.SplitSeq(params, ";") {
		k, v, ok := strings.Cut(strings.TrimSpace(p), "=")
		if ok && strings.EqualFold(strings.TrimSpace(k), "q") {
			f, err := strconv.ParseFloat(strings.TrimSpace(v), 64)
			if err != nil || f < 0 || f > 1 {
				return value, 0
			}
			q = f
		}
	}
	return value, q
}
