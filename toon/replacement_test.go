package toon

import (
	"encoding/json"
	"testing"
)

// TestIllFormedUTF8IsReplaced pins the replacement with literal bytes:
// every byte that does not start a valid sequence becomes U+FFFD
// (EF BF BD), one per byte as encoding/json does; valid sequences are kept,
// and the string is quoted (a bare value could not carry the change).
func TestIllFormedUTF8IsReplaced(t *testing.T) {
	for _, tc := range []struct{ in, toon, json string }{
		{"a\xffb", "s: \"a\xef\xbf\xbdb\"", "{\"s\":\"a\xef\xbf\xbdb\"}"},
		{"\xff", "s: \"\xef\xbf\xbd\"", "{\"s\":\"\xef\xbf\xbd\"}"},
		{"é\xc3", "s: \"é\xef\xbf\xbd\"", "{\"s\":\"é\xef\xbf\xbd\"}"},
		{"x\xe2\x82y", "s: \"x\xef\xbf\xbd\xef\xbf\xbdy\"", "{\"s\":\"x\xef\xbf\xbd\xef\xbf\xbdy\"}"},
		{"\xed\xa0\x80", "s: \"\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd\"", "{\"s\":\"\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd\"}"}, // a surrogate half
		{"ok é", "s: ok é", "{\"s\":\"ok é\"}"},
	} {
		v := map[string]string{"s": tc.in}
		out, err := Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		if string(out) != tc.toon {
			t.Errorf("TOON of %q = %q, want %q", tc.in, out, tc.toon)
		}
		j, err := ToJSON(v)
		if err != nil {
			t.Fatal(err)
		}
		if string(j) != tc.json {
			t.Errorf("JSON of %q = %q, want %q", tc.in, j, tc.json)
		}
		// encoding/json writes the same value (as the escape \ufffd).
		std, _ := json.Marshal(v)
		var a, b map[string]string
		if json.Unmarshal(j, &a) != nil || json.Unmarshal(std, &b) != nil || a["s"] != b["s"] {
			t.Errorf("JSON of %q: %q, encoding/json %q: different values", tc.in, j, std)
		}
	}
}
