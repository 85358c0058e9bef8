package codec_test

import (
	"bytes"
	"strings"
	"testing"

	"github.com/wirebench/wirebench/api"
	"github.com/wirebench/wirebench/codec"
)

// nestedCBOR is depth arrays of one element each around the integer 0.
func nestedCBOR(depth int) []byte {
	return append(bytes.Repeat([]byte{0x81}, depth), 0x00)
}

// TestCBORLimits pins the CBOR decoder's limits with literal values: 64
// nested arrays or maps (the leaf does not count), 1,048,576 array elements and map pairs. Each is
// accepted exactly and refused one over, before the input is read whole
// (a header announcing too many elements is enough to refuse).
func TestCBORLimits(t *testing.T) {
	if testing.Short() {
		// A second of building megabyte inputs for limits enforced by
		// fxamacker/cbor itself: no line here that a mutant could change
		// (scripts/mutation.sh runs -short; go test ./... does not).
		t.Skip("pins the CBOR library's own limits; run without -short")
	}
	c := codec.MustLookup("cbor").Codec
	var v any
	if err := c.Unmarshal(nestedCBOR(64), &v); err != nil {
		t.Errorf("64 nested arrays: %v", err)
	}
	if err := c.Unmarshal(nestedCBOR(65), &v); err == nil || !strings.Contains(err.Error(), "exceeded max nested level 64") {
		t.Errorf("65 nested arrays: %v, want the 64-level limit", err)
	}
	// 0x9a / 0xba: array / map with a 4-byte count.
	if err := c.Unmarshal(append([]byte{0x9a, 0x00, 0x10, 0x00, 0x00}, make([]byte, 1<<20)...), &v); err != nil {
		t.Errorf("array of 1,048,576 elements: %v", err)
	}
	if err := c.Unmarshal([]byte{0x9a, 0x00, 0x10, 0x00, 0x01}, &v); err == nil || !strings.Contains(err.Error(), "1048576") {
		t.Errorf("array of 1,048,577 elements: %v, want the element limit", err)
	}
	pairs := make([]byte, 0, 5+3<<20)
	pairs = append(pairs, 0xba, 0x00, 0x10, 0x00, 0x00)
	for i := range 1 << 20 {
		pairs = append(pairs, 0x1a, byte(i>>24), byte(i>>16), byte(i>>8), byte(i), 0x00) // uint32 key i, value 0
	}
	if err := c.Unmarshal(pairs, &v); err != nil {
		t.Errorf("map of 1,048,576 pairs: %v", err)
	}
	if err := c.Unmarshal([]byte{0xba, 0x00, 0x10, 0x00, 0x01}, &v); err == nil || !strings.Contains(err.Error(), "1048576") {
		t.Errorf("map of 1,048,577 pairs: %v, want the pair limit", err)
	}
}

// TestBaseMediaType: the base type is lower-cased, trimmed and stripped of
// parameters, also when the parameters do not parse; a malformed base type
// is kept as sent (the 415 then names it).
func TestBaseMediaType(t *testing.T) {
	for in, want := range map[string]string{
		"application/json":                    "application/json",
		" Application/JSON ":                  "application/json",
		"application/json; charset=utf-8":     "application/json",
		"APPLICATION/TOON;charset=UTF-8":      "application/toon",
		"application/json; charset":           "application/json",
		"Bad Type; q=1":                       "bad type",
		"application/cbor ;x=\"unclosed":      "application/cbor",
		";charset=utf-8":                      "",
		"":                                    "",
		"text/plain;a=1;b=2":                  "text/plain",
		"application/vnd.api+json; ext=\"x\"": "application/vnd.api+json",
	} {
		if got := codec.BaseMediaType(in); got != want {
			t.Errorf("BaseMediaType(%q) = %q, want %q", in, got, want)
		}
	}
}

// TestRegistry: a user picks from one format per media type (json-fast is
// a second library for application/json, not a format); names are unique.
func TestRegistry(t *testing.T) {
	if got := strings.Join(codec.Formats(), ","); got != "cbor,json,msgpack,protobuf,toon" {
		t.Errorf("Formats() = %s", got)
	}
	if got := strings.Join(codec.Names(), ","); got != "cbor,json,json-fast,msgpack,protobuf,toon" {
		t.Errorf("Names() = %s", got)
	}
	if e, ok := codec.ForMediaType("application/json"); !ok || e.Codec.Name() != "json" {
		t.Errorf("application/json is %v, want encoding/json (the first registered)", e.Codec)
	}
	if _, ok := codec.Lookup("yaml"); ok {
		t.Error("Lookup(yaml) succeeded")
	}
	mustPanic(t, "duplicate name", func() { codec.Register(codec.MustLookup("json").Codec, "application/x-other") })
	mustPanic(t, "unknown name", func() { codec.MustLookup("yaml") })
	// The failed registration left nothing behind.
	if _, ok := codec.ForMediaType("application/x-other"); ok {
		t.Error("a refused registration claimed its media type")
	}
	var u api.User
	if err := codec.MustLookup("json").Codec.Unmarshal([]byte(`{"id":7}`), &u); err != nil || u.ID != 7 {
		t.Errorf("json still works: %v %+v", err, u)
	}
}

func mustPanic(t *testing.T, what string, f func()) {
	t.Helper()
	defer func() {
		if recover() == nil {
			t.Errorf("%s: no panic", what)
		}
	}()
	f()
}
