package codec

import (
	"encoding/json"
	"strings"
	"testing"
)

// TestUnmarshalNumbers: both JSON codecs keep a number's digits as a
// json.Number, and refuse what Unmarshal refuses (trailing data, nesting
// past the limits, bad syntax); other codecs decode as they do.
func TestUnmarshalNumbers(t *testing.T) {
	for _, name := range []string{"json", "json-fast"} {
		c := MustLookup(name).Codec
		var v any
		if err := UnmarshalNumbers(c, []byte(`{"id":9007199254740993,"f":1.50,"a":[-0]}`), &v); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		m := v.(map[string]any)
		if m["id"] != json.Number("9007199254740993") || m["f"] != json.Number("1.50") || m["a"].([]any)[0] != json.Number("-0") {
			t.Errorf("%s: %#v: want the digits as written", name, m)
		}
		for _, bad := range []string{`{"a":1} {"b":2}`, `{"a":1,}`, strings.Repeat("[", 70) + strings.Repeat("]", 70), ""} {
			var w any
			if err := UnmarshalNumbers(c, []byte(bad), &w); err == nil {
				t.Errorf("%s: %.40q accepted", name, bad)
			} else if c.Unmarshal([]byte(bad), &w) == nil {
				t.Errorf("%s: %.40q refused here (%v), accepted by Unmarshal", name, bad, err)
			}
		}
	}
	var v any
	if err := UnmarshalNumbers(MustLookup("cbor").Codec, []byte{0x1b, 0, 0x20, 0, 0, 0, 0, 0, 1}, &v); err != nil || v != uint64(9007199254740993) {
		t.Errorf("cbor: %v %#v", err, v)
	}
}
