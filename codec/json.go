package codec

import (
	"bytes"
	"encoding/json"
	"unicode/utf8"

	gojson "github.com/goccy/go-json"
)

// MediaJSON is the canonical JSON media type.
const MediaJSON = "application/json"

// stdJSON is encoding/json: the baseline every comparison starts from.
type stdJSON struct{}

func (stdJSON) Name() string                  { return "json" }
func (stdJSON) Marshal(v any) ([]byte, error) { return json.Marshal(v) }

// MarshalTo is Marshal into dst: an Encoder writes its pooled buffer to dst
// where Marshal would copy it into a new slice. Both escape HTML alike;
// the newline Encode adds is dropped, so the bytes are Marshal's.
func (stdJSON) MarshalTo(dst *bytes.Buffer, v any) error {
	n := dst.Len()
	if err := json.NewEncoder(dst).Encode(v); err != nil {
		dst.Truncate(n)
		return err
	}
	dst.Truncate(dst.Len() - 1)
	return nil
}

// Unmarshal refuses what scanJSON refuses. encoding/json checks the whole
// body's syntax before it decodes (an iterative scan, trailing data
// included), so on a body within the limits by its bytes alone
// (jsonWithinLimits) the library's own check is the scan's, and the scan
// runs only to name a refusal.
func (stdJSON) Unmarshal(data []byte, v any) (err error) {
	if !jsonWithinLimits(data, DefaultLimits) {
		if err := scanJSON(data, DefaultLimits); err != nil {
			return err
		}
	}
	defer recoverDecode("json", &err)
	if err := json.Unmarshal(data, v); err != nil {
		if e := explainJSON(data, DefaultLimits); e != nil {
			return e
		}
		return err
	}
	return nil
}

// jsonWithinLimits reports whether b, whatever its syntax, cannot break
// lim, and whether a library that parses all of it strictly (encoding/json
// always, goccy into an any) refuses whatever else scanJSON refuses. It
// reads the body in the runtime's vector loops, a fraction of the scan's
// cost: nesting deeper than MaxDepth needs more '{' and '[' bytes than
// MaxDepth; a container of more than MaxItems elements needs more bytes
// than MaxItems; and the two refusals of the scan beyond the libraries'
// own, ill-formed UTF-8 and a \u escape of an unpaired surrogate (which
// they would turn into U+FFFD), need a byte that is not UTF-8 or a "\u".
// FuzzJSONWithinLimits checks that both paths accept the same bodies.
func jsonWithinLimits(b []byte, lim Limits) bool {
	return len(b) <= lim.MaxItems &&
		bytes.Count(b, []byte{'{'})+bytes.Count(b, []byte{'['}) <= lim.MaxDepth &&
		utf8.Valid(b) && !bytes.Contains(b, []byte(`\u`))
}

// fastJSON is github.com/goccy/go-json, chosen over bytedance/sonic by
// measurement on our own payloads (bench/jsonlibs): 3-4x encoding/json on
// marshal and 4-6x on unmarshal, where sonic on Go 1.26 was no faster than
// encoding/json at marshal. It is a drop-in replacement with the same
// semantics (struct tags, time.Time as RFC 3339 with nanoseconds).
type fastJSON struct{}

func (fastJSON) Name() string                  { return "json-fast" }
func (fastJSON) Marshal(v any) ([]byte, error) { return gojson.Marshal(v) }

// MarshalTo is Marshal into dst, as stdJSON's. (The two are not one helper
// taking a closure: the closure brought back the allocation saved here.)
func (fastJSON) MarshalTo(dst *bytes.Buffer, v any) error {
	n := dst.Len()
	if err := gojson.NewEncoder(dst).Encode(v); err != nil {
		dst.Truncate(n)
		return err
	}
	dst.Truncate(dst.Len() - 1)
	return nil
}

// Unmarshal refuses what scanJSON refuses. Into an any, goccy parses every
// byte as strictly as the scan (FuzzJSONWithinLimits), so on a body within
// the limits by its bytes alone the scan runs only to name a refusal; into
// a struct goccy skips unknown members without checking them, and the scan
// runs first.
func (fastJSON) Unmarshal(data []byte, v any) (err error) {
	p, isAny := v.(*any)
	if !isAny || !jsonWithinLimits(data, DefaultLimits) {
		if err := scanJSON(data, DefaultLimits); err != nil {
			return err
		}
		defer recoverDecode("json", &err)
		return gojson.Unmarshal(data, v)
	}
	old := *p
	defer func() {
		if err != nil {
			*p = old // as if the scan had refused the body first
		}
	}()
	defer recoverDecode("json", &err)
	if err := gojson.Unmarshal(data, v); err != nil {
		if e := explainJSON(data, DefaultLimits); e != nil {
			return e
		}
		return err
	}
	return nil
}

func init() {
	Register(stdJSON{}, MediaJSON)
	Register(fastJSON{}, MediaJSON)
}

// UnmarshalNumbers is c's Unmarshal into an any, with every JSON number
// kept as a json.Number (its digits as written) where c is a JSON codec:
// for a server that holds records of the user's own, whose integers may
// pass 2^53 (a float64 would round them). The limits and the errors are
// Unmarshal's; other codecs Unmarshal as they do.
func UnmarshalNumbers(c Codec, data []byte, v *any) (err error) {
	type decoder interface {
		UseNumber()
		Decode(any) error
	}
	var dec decoder
	switch c.(type) {
	case stdJSON:
		dec = json.NewDecoder(bytes.NewReader(data))
	case fastJSON:
		dec = gojson.NewDecoder(bytes.NewReader(data))
	default:
		return c.Unmarshal(data, v)
	}
	// A decoder reads the first value only: the scan refuses anything
	// after it, as Unmarshal does, and whatever else the limits refuse.
	if err := scanJSON(data, DefaultLimits); err != nil {
		return err
	}
	defer recoverDecode("json", &err)
	dec.UseNumber()
	return dec.Decode(v)
}
