// Package toon encodes and decodes TOON (Token-Oriented Object Notation),
// targeting specification v4.0 (toon-spec: 4.0, see testdata/spec/SPEC.md)
// and byte-for-byte agreement with the reference implementation
// @toon-format/toon 4.4.
//
// TOON carries the JSON data model in an indentation-based layout whose
// arrays declare their length once and whose uniform arrays of objects
// collapse into tables:
//
//	users[2]{id,name,created_at}:
//	  1,Ada,"2025-01-02T03:04:05.123456789Z"
//	  2,Bob,"2025-01-02T03:04:06Z"
//
// # Go values
//
// Marshal and Unmarshal follow encoding/json's mapping: struct fields are
// named by their `toon:"name,omitempty"` tag, falling back to the `json` tag
// and then the field name (matched case-insensitively on decode); "-" skips
// a field. time.Time is written as an RFC 3339 string with nanoseconds
// (time.RFC3339Nano) and read back from it; other encoding.TextMarshaler and
// TextUnmarshaler types become strings. Maps encode with sorted keys, nil
// slices and maps as null, NaN and ±Inf as null (spec §3).
//
// Because key order is part of the TOON data model, decoding into an `any`
// produces an Object (an ordered slice of members) rather than a map, []any
// for arrays, and Number for numbers. Number keeps the exact decimal value
// of the token in canonical form, so 12345678901234567890 or 1e400 survive a
// round trip; the reference implementation would round both through float64
// (and reads 1e400 as a string). FromJSON and ToJSON convert between TOON's
// generic values and JSON text without losing key order or digits.
//
// # Limits
//
// Decoding never trusts a declared length for allocation: a header such as
// items[999999999]: reserves room for a few elements and grows as rows
// arrive; in strict mode a count that differs from the header is ErrCount.
// Nesting deeper than UnmarshalOptions.MaxDepth (default 1000) levels of
// objects and arrays is ErrDepth, on encode as on decode, which also stops
// cyclic pointers.
//
// # Strict mode
//
// Decoding is strict by default (spec §14). UnmarshalOptions.Lenient relaxes
// it: declared counts are not checked, blank lines inside arrays are
// skipped, duplicate keys resolve last-write-wins, indentation need not be
// a multiple of the indent size (depth rounds down) and tabs in it count
// as one level each, and a scope's first line may be indented more than
// one level. As in the reference implementation, a table row of the wrong
// width is an error in both modes.
// Malformed array headers (foo[1][bar]:, key[]:, foo[2]extra:) are errors in
// both modes, as in the reference implementation since 4.4; the v4.0 fixtures
// that read them as literal keys are documented in testdata/spec/README.md.
//
// # Performance
//
// Encoders and decoders are compiled once per Go type and cached. Structs
// whose fields are primitives, slices of primitives or slices of such
// "row" structs are written and read without building generic values,
// table cells going straight to and from struct fields by offset; other
// shapes (maps, interfaces, nested structs) are normalized to the generic
// model first, because their TOON layout depends on their contents.
// Decoded strings are copied out of the input into shared 4 KiB blocks.
//
// # Streaming
//
// Encoder writes a table row by row when the row count is known up front
// (BeginTable, Row, End); Decoder reads the elements of a document's first
// array one at a time with Next, in memory bounded by the longest line.
package toon
