package codec

import (
	"bytes"
	"encoding/json"
	"testing"
	"unicode/utf8"

	"github.com/vmihailenco/msgpack/v5"
)

// FuzzScanJSON checks the JSON scanner against encoding/json's validator:
// what the scanner accepts is valid JSON in valid UTF-8, and valid JSON in
// valid UTF-8 without \u escapes, too short to nest past the limit (two
// bytes a level), is accepted.
func FuzzScanJSON(f *testing.F) {
	for _, s := range []string{`{"name":"Ada","email":"a@b.co"}`, `[1,-2.5e+3,true,false,null,"\ud83d\ude00"]`, `{"a":{"b":[[]]}}`, " 0 ", `"\u00e9"`, "{\"a\":\"\xff\"}", `[1,]`, `01`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		err := scanJSON(data, DefaultLimits)
		valid := json.Valid(data) && utf8.Valid(data)
		if err == nil && !valid {
			t.Fatalf("scanner accepts %q, which encoding/json or UTF-8 refuses", data)
		}
		if err != nil && valid && len(data) < 2*DefaultLimits.MaxDepth && !bytes.Contains(data, []byte(`\u`)) {
			t.Fatalf("scanner refuses valid %q: %v", data, err)
		}
	})
}

// FuzzScanMsgpack checks the msgpack scanner against the library: what the
// scanner accepts, the library skips completely (the scanner is never more
// permissive), and what the library encodes from the value it decodes, the
// scanner accepts. The library only ever sees input the scanner accepted:
// on the rest it is unsafe (a 5-byte map32 header makes it allocate
// gigabytes), which is why the scanner exists.
func FuzzScanMsgpack(f *testing.F) {
	for _, v := range []any{map[string]any{"name": "Ada", "n": []any{1, -1, 1.5, true, nil, []byte{1}}}, "é", uint64(1 << 40), []any{}} {
		b, _ := msgpack.Marshal(v)
		f.Add(b)
	}
	f.Add([]byte{0xc1})
	f.Add([]byte{0xdf, 0xfb, 0xfb, 0xfb, 0xfb})
	f.Add([]byte{0xd6, 0xff, 0, 0, 0, 1}) // timestamp extension
	f.Fuzz(func(t *testing.T, data []byte) {
		if scanMsgpack(data, DefaultLimits) != nil {
			return
		}
		// Skip walks every value (it is the recursive path that crashed
		// before the scanner) without giving ext types or map keys a Go
		// meaning.
		r := bytes.NewReader(data)
		if err := msgpack.NewDecoder(r).Skip(); err != nil || r.Len() != 0 {
			t.Fatalf("scanner accepts % x, the library cannot skip it: %v (%d bytes left)", data, err, r.Len())
		}
		var v any
		if err := msgpack.Unmarshal(data, &v); err != nil {
			return // ext types without a Go type, non-string map keys
		}
		again, err := msgpack.Marshal(v)
		if err != nil {
			return // NaN map keys and the like: nothing to check
		}
		if err := scanMsgpack(again, DefaultLimits); err != nil {
			t.Fatalf("scanner refuses % x, the library's encoding of %#v: %v", again, v, err)
		}
	})
}

// TestScannersDoNotAllocate: the scanners run before every decode; a
// shallow body costs them no allocation.
func TestScannersDoNotAllocate(t *testing.T) {
	js := []byte(`{"id":1,"name":"Ada","email":"a@b.co","tags":[1,[2,{"a":null}]]}`)
	mp, err := msgpack.Marshal(map[string]any{"id": 1, "name": "Ada", "tags": []any{1, []any{2, map[string]any{"a": nil}}}})
	if err != nil {
		t.Fatal(err)
	}
	pb := []byte{0x08, 0x01, 0x12, 0x03, 'A', 'd', 'a', 0x2b, 0x08, 0x01, 0x2c}
	for name, scan := range map[string]func() error{
		"json":     func() error { return scanJSON(js, DefaultLimits) },
		"msgpack":  func() error { return scanMsgpack(mp, DefaultLimits) },
		"protobuf": func() error { return scanProtobuf(pb, DefaultLimits) },
	} {
		if err := scan(); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if n := testing.AllocsPerRun(100, func() { _ = scan() }); n != 0 {
			t.Errorf("%s: %.0f allocations per scan", name, n)
		}
	}
}
