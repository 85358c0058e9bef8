package codec

import (
	"bytes"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	gojson "github.com/goccy/go-json"
)

// withinLimitsSeeds are bodies at the edges of what jsonWithinLimits
// lets the libraries check alone: the libraries' leniencies the scan
// refuses (bad UTF-8, surrogates, control characters, NUL, which goccy
// reads as the end), syntax errors, and nesting and item counts near
// small limits.
var withinLimitsSeeds = []string{
	`{"id":1000,"route":{"from":"DUB","to":"AMS","legs":1},"parcels":[{"kg":2.27,"fragile":false}],"ok":true}`,
	`[1,]`, `{"a":1,}`, `01`, `1.`, `.5`, `-`, `1e`, `+1`, `[1 2]`, `{"a" 1}`, `tru`, `truex`, `[1]x`, `[1] [2]`,
	"\"a\tb\"", `"\x"`, `"\u12"`, `{a:1}`, `[1,,2]`, `{"a":1}}`, `[[1]`, `"abc`, `1 2`, ` `, ``, `[{]`,
	`[-01]`, `[1.e5]`, `[1e+]`, `NaN`, "[1]\x00", "[1\x00]", "\"a\x00\"", "{\"a\":\"\xff\"}", "\"\xed\xa0\x80\"",
	`"\ud800"`, `"\ud83d\ude00"`, `"\\u0041"`, "\f1", "\v1", "\u00a01", `[[[[1]]]]`, `[[[[[1]]]]]`, `[1,2,3,4,5]`,
	`{"a":{"b":{"c":{}}}}`, `"{[{["`, `-0`, `1E+05`, `[1e999]`, `123456789012345678901234567890`,
}

// FuzzJSONWithinLimits checks the codecs' shortcut: on a body that
// jsonWithinLimits passes, the limits cannot refuse it (under any small
// limits), and the JSON codecs accept exactly what the scan followed by
// the library accepts, refusing with the scan's error where the scan
// refuses, into an any and (encoding/json) into a struct.
func FuzzJSONWithinLimits(f *testing.F) {
	for _, s := range withinLimitsSeeds {
		f.Add([]byte(s), uint8(4), uint8(3))
	}
	f.Fuzz(func(t *testing.T, data []byte, depth, items uint8) {
		lim := Limits{MaxDepth: int(depth % 8), MaxItems: 1 + int(items%8)}
		if jsonWithinLimits(data, lim) {
			if a, b := validJSON(data, lim), validJSON(data, Limits{MaxDepth: 1 << 20, MaxItems: 1 << 30}); a != b {
				t.Fatalf("%q passes jsonWithinLimits(%+v), yet the limits decide the scan: %v without them, %v with", data, lim, b, a)
			}
		}
		checkSameAsScan(t, "json", stdJSON{}, json.Unmarshal, data)
		checkSameAsScan(t, "json-fast", fastJSON{}, gojson.Unmarshal, data)
	})
}

// checkSameAsScan compares c.Unmarshal(data) with the scan followed by the
// library, into an any and into a struct.
func checkSameAsScan(t *testing.T, name string, c Codec, lib func([]byte, any) error, data []byte) {
	t.Helper()
	type rec struct {
		ID   int    `json:"id"`
		Name string `json:"name"`
	}
	for _, kind := range []string{"any", "struct"} {
		var got, want error
		var gotV, wantV any
		scanErr := scanJSON(data, DefaultLimits)
		switch kind {
		case "any":
			gotV, wantV = "untouched", "untouched"
			got = c.Unmarshal(data, &gotV)
			want = scanErr
			if want == nil {
				want = lib(data, &wantV)
			}
		default:
			var g, w rec
			got = c.Unmarshal(data, &g)
			want = scanErr
			if want == nil {
				want = lib(data, &w)
			}
			gotV, wantV = g, w
		}
		if (got == nil) != (want == nil) {
			t.Fatalf("%s into %s: %q: codec says %v, the scan and library %v", name, kind, data, got, want)
		}
		if scanErr != nil && got.Error() != scanErr.Error() {
			t.Fatalf("%s into %s: %q: codec refuses with %v, the scan with %v", name, kind, data, got, scanErr)
		}
		if kind == "any" && scanErr != nil && gotV != "untouched" {
			t.Fatalf("%s: %q refused (%v) but the value was changed to %#v", name, data, got, gotV)
		}
		if got == nil && !jsonEqual(gotV, wantV) {
			t.Fatalf("%s into %s: %q: decoded %#v, the library %#v", name, kind, data, gotV, wantV)
		}
	}
}

func jsonEqual(a, b any) bool {
	x, err1 := json.Marshal(a)
	y, err2 := json.Marshal(b)
	return err1 == nil && err2 == nil && bytes.Equal(x, y)
}

// TestJSONWithinLimitsRefusals: the bodies the libraries accept and the
// scan refuses are refused by both JSON codecs into an any, with the
// scan's error, and the value is left as it was.
func TestJSONWithinLimitsRefusals(t *testing.T) {
	for _, c := range []Codec{stdJSON{}, fastJSON{}} {
		for body, sentinel := range map[string]error{
			"\"a\xffb\"": ErrSyntax,
			`"\udc00"`:   ErrSyntax,
			"[1]\x00":    ErrTrailing,
			`[1] [2]`:    ErrTrailing,
			`{"a":[1,}`:  ErrSyntax,
			strings.Repeat("[", 65) + strings.Repeat("]", 65): ErrDepth,
		} {
			v := any("kept")
			err := c.Unmarshal([]byte(body), &v)
			if !errors.Is(err, sentinel) || v != "kept" {
				t.Errorf("%s: %q: %v (value %#v), want %v and the value kept", c.Name(), body, err, v, sentinel)
			}
		}
	}
}

// TestJSONWithinLimits pins the shortcut's bounds: the '{' and '[' bytes
// (in strings too) against MaxDepth, the length against MaxItems, and no
// bad UTF-8 or \u escape.
func TestJSONWithinLimits(t *testing.T) {
	lim := Limits{MaxDepth: 2, MaxItems: 8}
	for body, want := range map[string]bool{
		`[[1]]`:       true,
		`[[[1]]]`:     false,
		`[["{"]]`:     false,
		`[1,2,3]`:     true,
		`[1,2,3,4,5]`: false, // 11 bytes > 8
		"\"\xff\"":    false,
		`"\u0041"`:    false,
		`"\n"`:        true,
	} {
		if got := jsonWithinLimits([]byte(body), lim); got != want {
			t.Errorf("jsonWithinLimits(%q, %+v) = %v, want %v", body, lim, got, want)
		}
	}
}
