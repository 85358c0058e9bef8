package codec

import (
	"bytes"
	"encoding/json"

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

func (stdJSON) Unmarshal(data []byte, v any) (err error) {
	if err := scanJSON(data, DefaultLimits); err != nil {
		return err
	}
	defer recoverDecode("json", &err)
	return json.Unmarshal(data, v)
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

func (fastJSON) Unmarshal(data []byte, v any) (err error) {
	if err := scanJSON(data, DefaultLimits); err != nil {
		return err
	}
	defer recoverDecode("json", &err)
	return gojson.Unmarshal(data, v)
}

func init() {
	Register(stdJSON{}, MediaJSON)
	Register(fastJSON{}, MediaJSON)
}
