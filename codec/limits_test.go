package codec_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/vmihailenco/msgpack/v5"

	"github.com/wirebench/wirebench/api"
	"github.com/wirebench/wirebench/codec"
	"github.com/wirebench/wirebench/internal/testkit"
)

// nestedMsgpack is issue 10's crash: {"x": [[[...nil...]]]} with n nested
// one-element arrays (0x91), or maps {"":...} (0x81 0xa0) when mapped.
func nestedMsgpack(n int, mapped bool) []byte {
	unit := []byte{0x91}
	if mapped {
		unit = []byte{0x81, 0xa0}
	}
	b := append([]byte{0x81, 0xa1, 'x'}, bytes.Repeat(unit, n)...)
	return append(b, 0xc0)
}

// TestDeepNestingIsRefused: before the limits the msgpack library's
// recursive skip overflowed the goroutine stack (fatal, not recoverable)
// on 8 M nested arrays, and 4 M nested maps held 1 GB. Each format's
// decoder must refuse such a body quickly, with an error.
func TestDeepNestingIsRefused(t *testing.T) {
	deep := codec.DefaultLimits.MaxDepth + 1
	cases := []struct {
		codec string
		body  []byte
	}{
		{"msgpack", nestedMsgpack(8<<20-10, false)},
		{"msgpack", nestedMsgpack(4<<20, true)},
		{"msgpack", nestedMsgpack(deep, false)},
		{"json", []byte(`{"x":` + strings.Repeat("[", 8<<20) + strings.Repeat("]", 8<<20) + "}")},
		{"json-fast", []byte(`{"x":` + strings.Repeat(`{"a":`, deep) + "1" + strings.Repeat("}", deep) + "}")},
		{"cbor", append([]byte{0xa1, 0x61, 'x'}, append(bytes.Repeat([]byte{0x81}, 8<<20), 0xf6)...)},
		{"toon", []byte("x:\n" + nestedTOON(deep))},
	}
	for _, tc := range cases {
		t.Run(tc.codec, func(t *testing.T) {
			start := time.Now()
			var u api.User
			err := codec.MustLookup(tc.codec).Codec.Unmarshal(tc.body, &u)
			if err == nil {
				t.Fatalf("%d-byte nested body decoded", len(tc.body))
			}
			if !strings.Contains(err.Error(), "deep") && !strings.Contains(err.Error(), "nest") {
				t.Errorf("error does not name the nesting: %v", err)
			}
			// Generous: the scan is linear and stops at the limit; the
			// crash took the process down, a slow path took seconds.
			if d := time.Since(start); testkit.Timing() && d > 2*time.Second {
				t.Errorf("refusing took %v", d)
			}
		})
	}
}

func nestedTOON(n int) string {
	var sb strings.Builder
	for i := 1; i <= n; i++ {
		sb.WriteString(strings.Repeat("  ", i) + "a:\n")
	}
	return sb.String()
}

// TestScannersAcceptWhatLibrariesEncode: every value the libraries encode
// passes the scanners, so the limits refuse nothing legitimate.
func TestScannersAcceptWhatLibrariesEncode(t *testing.T) {
	vals := []any{
		0, 1, -1, -33, 127, 128, 255, 256, 65535, 65536, 1 << 32, -1 << 40, int8(-128), uint64(1 << 63),
		float32(1.5), 2.25, true, false, nil, "", "é", strings.Repeat("s", 31), strings.Repeat("s", 32),
		strings.Repeat("s", 256), strings.Repeat("s", 70000), []byte{}, []byte{1, 2}, bytes.Repeat([]byte{7}, 300),
		bytes.Repeat([]byte{7}, 70000), time.Unix(1, 2), time.Unix(1<<33, 5), time.Unix(5, 0),
		[]int{}, make([]int, 15), make([]int, 16), make([]int, 70000),
		map[string]int{}, map[string]any{"a": []any{map[string]any{"b": nil}}},
		func() map[string]int {
			m := map[string]int{} // 17 pairs: map16 in msgpack
			for i := range 17 {
				m[strings.Repeat("k", i)] = i
			}
			return m
		}(),
		&api.UserList{Users: []api.User{{ID: 1, Name: "a", CreatedAt: time.Unix(1, 1)}}},
	}
	for _, name := range []string{"msgpack", "json"} {
		c := codec.MustLookup(name).Codec
		n := 0
		for _, v := range vals {
			data, err := c.Marshal(v)
			if err != nil {
				t.Fatalf("%s: Marshal(%T): %v", name, v, err)
			}
			var out any
			if err := c.Unmarshal(data, &out); err != nil {
				t.Errorf("%s: Unmarshal(Marshal(%T)) = %v", name, v, err)
			}
			// Every strict prefix of one value is incomplete.
			for cut := range min(len(data), 40) {
				err := c.Unmarshal(data[:cut], &out)
				// A JSON prefix may itself be JSON ("12" of "123");
				// encoding/json's validator is the reference there.
				if want := name == "json" && json.Valid(data[:cut]); (err == nil) != want {
					t.Errorf("%s: prefix %q of %q (%T): err = %v", name, data[:cut], data, v, err)
				}
			}
			n++
		}
		if n != len(vals) {
			t.Fatalf("%s: checked %d of %d values", name, n, len(vals))
		}
	}
}

// TestTrailingDataAndText: the inconsistencies of issue 10 item 7 — msgpack
// with trailing bytes was accepted, JSON with invalid UTF-8 was stored
// with U+FFFD — now refused by every JSON and msgpack decoder.
func TestTrailingDataAndText(t *testing.T) {
	user, _ := msgpack.Marshal(&api.User{Name: "Ada", Email: "a@b.co"})
	cases := []struct {
		codec string
		body  []byte
		want  error
	}{
		{"msgpack", append(user, 0xc0), codec.ErrTrailing},
		{"msgpack", append(user, user...), codec.ErrTrailing},
		{"msgpack", []byte{0x81, 0xa4, 'n', 'a', 'm', 'e', 0xa2, 0xff, 'x'}, codec.ErrSyntax},
		{"msgpack", []byte{0xc1}, codec.ErrSyntax},
		{"msgpack", []byte{0xdd, 0xff, 0xff, 0xff, 0xff}, codec.ErrTooMany},
		{"msgpack", []byte{0xdb, 0xff, 0xff, 0xff, 0xff, 'a'}, codec.ErrTooMany},
		{"msgpack", []byte{0xdf, 0, 0x20, 0, 0, 0xc0}, codec.ErrTooMany},
		{"json", []byte("{\"name\":\"A\xffda\",\"email\":\"a@b.co\"}"), codec.ErrSyntax},
		{"json-fast", []byte("{\"name\":\"A\xc3da\",\"email\":\"a@b.co\"}"), codec.ErrSyntax},
		{"json", []byte(`{"name":"\ud800","email":"a@b.co"}`), codec.ErrSyntax},
		{"json-fast", []byte(`{"name":"\udc00\ud800x","email":"a@b.co"}`), codec.ErrSyntax},
		{"json", []byte(`{"name":"Ada"} {}`), codec.ErrTrailing},
		{"json-fast", []byte(`{"name":"Ada"}x`), codec.ErrTrailing},
		{"json-fast", []byte(`{"name":"Ada",}`), codec.ErrSyntax},
		{"json-fast", []byte(`{"name":01}`), codec.ErrSyntax},
		{"json", []byte(`{"a":[1,2,]}`), codec.ErrSyntax},
	}
	for _, tc := range cases {
		var u api.User
		err := codec.MustLookup(tc.codec).Codec.Unmarshal(tc.body, &u)
		if !errors.Is(err, tc.want) {
			t.Errorf("%s %q: err = %v, want %v", tc.codec, tc.body, err, tc.want)
		}
	}
	// A valid surrogate pair and escaped text still decode.
	var u api.User
	if err := codec.MustLookup("json").Codec.Unmarshal([]byte(`{"name":"\ud83d\ude00 \"q\" \u00e9 é"}`), &u); err != nil || u.Name != "😀 \"q\" é é" {
		t.Errorf("pair: %q, %v", u.Name, err)
	}
}

// TestMaxItems: a container of more than MaxItems elements is refused.
func TestMaxItems(t *testing.T) {
	n := codec.DefaultLimits.MaxItems + 1
	arr := "[" + strings.Repeat("0,", n-1) + "0]"
	var v any
	if err := codec.MustLookup("json").Codec.Unmarshal([]byte(arr), &v); !errors.Is(err, codec.ErrTooMany) {
		t.Errorf("json %d elements: %v", n, err)
	}
	ok := "[" + strings.Repeat("0,", n-2) + "0]"
	if err := codec.MustLookup("json").Codec.Unmarshal([]byte(ok), &v); err != nil {
		t.Errorf("json %d elements (the limit): %v", n-1, err)
	}
	mp := append([]byte{0xdd, byte(n >> 24), byte(n >> 16), byte(n >> 8), byte(n)}, make([]byte, n)...)
	if err := codec.MustLookup("msgpack").Codec.Unmarshal(mp, &v); !errors.Is(err, codec.ErrTooMany) {
		t.Errorf("msgpack %d elements: %v", n, err)
	}
	mp = append([]byte{0xdd, byte((n - 1) >> 24), byte((n - 1) >> 16), byte((n - 1) >> 8), byte(n - 1)}, make([]byte, n-1)...)
	var w any
	if err := codec.MustLookup("msgpack").Codec.Unmarshal(mp, &w); err != nil {
		t.Errorf("msgpack %d elements (the limit): %v", n-1, err)
	}
}
