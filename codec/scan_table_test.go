package codec

import (
	"errors"
	"flag"
	"fmt"
	"strings"
	"testing"
)

var printScans = flag.Bool("print-scans", false, "print the scanners' answers to the table's inputs (to write new rows)")

// small limits put every boundary within a few bytes.
var small = Limits{MaxDepth: 3, MaxItems: 4}

// scanCase is one input and the scanner's exact answer: "" for accepted,
// else the error text, whose sentinel, offset and detail are the contract
// (a client is told where its body went wrong).
type scanCase struct {
	in   string
	want string
}

func runScanTable(t *testing.T, name string, scan func([]byte, Limits) error, cases []scanCase) {
	t.Helper()
	if len(cases) == 0 {
		t.Fatal("empty table")
	}
	for _, tc := range cases {
		got := ""
		// Exactly as long as its capacity: a scanner that reads past the
		// body's end panics instead of reading spare capacity.
		in := make([]byte, len(tc.in))
		copy(in, tc.in)
		if err := scan(in, small); err != nil {
			// The protobuf library's messages mix in non-breaking spaces
			// at random (so that nobody matches them); read them as spaces.
			got = strings.ReplaceAll(err.Error(), "\u00a0", " ")
		}
		if *printScans {
			fmt.Printf("\t\t{%q, %q},\n", tc.in, got)
			continue
		}
		if got != tc.want {
			t.Errorf("%s(%q) = %q, want %q", name, tc.in, got, tc.want)
		}
	}
}

// TestScanJSONTable pins scanJSON's answers at each boundary: depth and
// element counts at the limit and one past, empty containers, string
// escapes and surrogates, control characters, UTF-8, numbers and literals.
func TestScanJSONTable(t *testing.T) {
	runScanTable(t, "scanJSON", scanJSON, jsonScanCases)
}

var jsonScanCases = []scanCase{
	{"[[[1]]]", ""},
	{"[[[[1]]]]", "json: nesting too deep at offset 3: more than 3 levels"},
	{"[[[]]]", ""},
	{"[[[[]]]]", "json: nesting too deep at offset 3: more than 3 levels"},
	{"{\"a\":{\"b\":{\"c\":1}}}", ""},
	{"{\"a\":{\"b\":{\"c\":{}}}}", "json: nesting too deep at offset 15: more than 3 levels"},
	{"[1,2,3,4]", ""},
	{"[1,2,3,4,5]", "json: length over the limit at offset 8: more than 4 elements"},
	{"[[],[],[],[]]", ""},
	{"[[],[],[],[],[]]", "json: length over the limit at offset 12: more than 4 elements"},
	{"[{},{},{},{}]", ""},
	{"[[1],[2],[3],[4]]", ""},
	{"{\"a\":1,\"b\":2,\"c\":3,\"d\":4}", ""},
	{"{\"a\":1,\"b\":2,\"c\":3,\"d\":4,\"e\":5}", "json: length over the limit at offset 24: more than 4 elements"},
	{"[[1,2,3,4],1,2,3]", ""},
	{"[ ]", ""},
	{"{ }", ""},
	{"[}", "json: malformed at offset 1: invalid value"},
	{"{]", "json: malformed at offset 1: want a string key"},
	{"[1 2]", "json: malformed at offset 3: want ',' or the end of the container, got '2'"},
	{"[1,]", "json: malformed at offset 3: invalid value"},
	{"{\"a\" 1}", "json: malformed at offset 5: want ':' after a key"},
	{"{1:2}", "json: malformed at offset 1: want a string key"},
	{"{\"a\":1,}", "json: malformed at offset 7: want a string key"},
	{" 1 ", ""},
	{"1 2", "json: trailing data at offset 2: 1 bytes after the value"},
	{"[1]]", "json: trailing data at offset 3: 1 bytes after the value"},
	{"", "json: malformed at offset 0: unexpected end of input, want a value"},
	{"[", "json: malformed at offset 1: unexpected end of input, want a value"},
	{"\"a b\"", ""},
	{"\"a\x1fb\"", "json: malformed at offset 2: control character 0x1f in a string"},
	{"\"a\x7fb\"", ""},
	{"\"\\\"\\\\\\/\\b\\f\\n\\r\\t\"", ""},
	{"\"\\x\"", "json: malformed at offset 1: invalid escape \\x"},
	{"\"\\", "json: malformed at offset 1: truncated escape"},
	{"\"abc", "json: malformed at offset 0: unterminated string"},
	{"\"\\u00e9\"", ""},
	{"\"\\u00E9\"", ""},
	{"\"\\u00g9\"", "json: malformed at offset 1: invalid \\u escape"},
	{"\"\\u123\"", "json: malformed at offset 1: invalid \\u escape"},
	{"\"\\u12", "json: malformed at offset 1: invalid \\u escape"},
	{"\"\\ud7ff\"", ""},
	{"\"\\ue000\"", ""},
	{"\"\\ud800\\udc00\"", ""},
	{"\"\\udbff\\udfff\"", ""},
	{"\"\\ud800\"", "json: malformed at offset 1: unpaired high surrogate \\ud800"},
	{"\"\\ud800x\"", "json: malformed at offset 1: unpaired high surrogate \\ud800"},
	{"\"\\ud800\\u0041\"", "json: malformed at offset 1: unpaired high surrogate \\ud800"},
	{"\"\\ud800\\ue000\"", "json: malformed at offset 1: unpaired high surrogate \\ud800"},
	{"\"\\ud800\\udbff\"", "json: malformed at offset 1: unpaired high surrogate \\ud800"},
	{"\"\\ud800\\ud", "json: malformed at offset 1: unpaired high surrogate \\ud800"},
	{"\"\\udc00\"", "json: malformed at offset 1: unpaired low surrogate \\udc00"},
	{"\"\\udfff\"", "json: malformed at offset 1: unpaired low surrogate \\udfff"},
	{"\"\\uDC00\"", "json: malformed at offset 1: unpaired low surrogate \\udc00"},
	{"\"\\uDBFF\"", "json: malformed at offset 1: unpaired high surrogate \\udbff"},
	{"\"\\uD83D\\uDE00\"", ""},
	{"\"\\uDbFf\\uDfFf\"", ""},
	{"\"\\u0041", "json: malformed at offset 0: unterminated string"},
	{"\"\\uD800\\uDC00", "json: malformed at offset 0: unterminated string"},
	{"\"\xef\xbf\xbd\"", ""}, // U+FFFD itself is valid text
	{"\"\xc3\xa9\"", ""},
	{"\"\xff\"", "json: malformed at offset 1: string is not valid UTF-8"},
	{"\"\xc3\"", "json: malformed at offset 1: string is not valid UTF-8"},
	{"\"\xed\xa0\x80\"", "json: malformed at offset 1: string is not valid UTF-8"},
	{"0", ""},
	{"-0", ""},
	{"-", "json: malformed at offset 0: invalid value"},
	{"01", "json: trailing data at offset 1: 1 bytes after the value"},
	{"-01", "json: trailing data at offset 2: 1 bytes after the value"},
	{"10", ""},
	{"1.", "json: malformed at offset 1: no digits after the decimal point"},
	{"1.5", ""},
	{"1.5e", "json: malformed at offset 4: no digits in the exponent"},
	{"1e+", "json: malformed at offset 3: no digits in the exponent"},
	{"1E-5", ""},
	{"1e+5", ""},
	{"-0.0e0", ""},
	{".5", "json: malformed at offset 0: invalid value"},
	{"+1", "json: malformed at offset 0: invalid value"},
	{"true", ""},
	{"false", ""},
	{"null", ""},
	{"tru", "json: malformed at offset 0: invalid literal"},
	{"fals", "json: malformed at offset 0: invalid literal"},
	{"nul", "json: malformed at offset 0: invalid literal"},
	{"[tru", "json: malformed at offset 1: invalid literal"},
	{"[fals", "json: malformed at offset 1: invalid literal"},
	{"[nul", "json: malformed at offset 1: invalid literal"},
	{"[true,false,null]", ""},
	{"truex", "json: trailing data at offset 4: 1 bytes after the value"},
	{"nulL", "json: malformed at offset 0: invalid literal"},
}

// TestScanMsgpackTable does the same for scanMsgpack: every length field
// size, lengths equal to and one past the bytes left, depth and element
// counts at the limit and one past, strings and their UTF-8, and each
// family of type bytes.
func TestScanMsgpackTable(t *testing.T) {
	runScanTable(t, "scanMsgpack", scanMsgpack, msgpackScanCases)
}

var msgpackScanCases = []scanCase{
	{"\x01", ""},
	{"\x01\x02", "msgpack: trailing data at offset 1: 1 bytes after the value"},
	{"", "msgpack: malformed at offset 0: truncated: 1 more values expected"},
	{"\xc1", "msgpack: malformed at offset 0: invalid type byte 0xc1"},
	{"\xc0", ""},
	{"\xc2", ""},
	{"\xc3", ""},
	{"\xe0", ""},
	{"\x7f", ""},
	{"\x91\x91\x91\x01", ""},
	{"\x91\x91\x91\x91\x01", "msgpack: nesting too deep at offset 3: more than 3 levels"},
	{"\x91\x91\x90", ""},
	{"\x91\x91\x91\x90", "msgpack: nesting too deep at offset 3: more than 3 levels"},
	{"\x81\xa1a\x81\xa1b\x81\xa1c\x01", ""},
	{"\x81\xa1a\x81\xa1b\x81\xa1c\x81\xa1d\x01", "msgpack: nesting too deep at offset 9: more than 3 levels"},
	{"\x94\x01\x02\x03\x04", ""},
	{"\x95\x01\x02\x03\x04\x05", "msgpack: length over the limit at offset 0: 5 elements, limit 4"},
	{"\x84\x01\x01\x02\x02\x03\x03\x04\x04", ""},
	{"\x85\x01\x01\x02\x02\x03\x03\x04\x04\x05\x05", "msgpack: length over the limit at offset 0: 5 elements, limit 4"},
	{"\x93\x01\x02", "msgpack: length over the limit at offset 0: 3 values declared, 2 bytes left"},
	{"\x92\x01\x02\x03", "msgpack: trailing data at offset 3: 1 bytes after the value"},
	{"\x82\x01\x01\x02", "msgpack: length over the limit at offset 0: 4 values declared, 3 bytes left"},
	{"\xdc\x00\x02\x01\x02", ""},
	{"\xdc\x00\x05\x01\x02\x03\x04\x05", "msgpack: length over the limit at offset 0: 5 elements, limit 4"},
	{"\xdc\x00", "msgpack: malformed at offset 0: truncated length"},
	{"\xdc\x00\x03\x01\x02", "msgpack: length over the limit at offset 0: 3 values declared, 2 bytes left"},
	{"\xdd\x00\x00\x00\x02\x01\x02", ""},
	{"\xdd\x00\x00\x00\x05\x01\x02\x03\x04\x05", "msgpack: length over the limit at offset 0: 5 elements, limit 4"},
	{"\xdd\xff\xff\xff\xff", "msgpack: length over the limit at offset 0: length 4294967295 exceeds the 5-byte body"},
	{"\xc4\x03\x00", "msgpack: malformed at offset 0: truncated: 3-byte payload, 1 bytes left"}, // a length equal to the body's
	{"\xdc\x00\x03", "msgpack: length over the limit at offset 0: 3 values declared, 0 bytes left"},
	{"\xde\x00\x01\x01\x02", ""},
	{"\xde\x00\x02\x01\x02", "msgpack: length over the limit at offset 0: 4 values declared, 2 bytes left"},
	{"\xdf\x00\x00\x00\x01\x01\x02", ""},
	{"\xa3abc", ""},
	{"\xa3ab", "msgpack: malformed at offset 0: truncated: 3-byte payload, 2 bytes left"},
	{"\xa2\xc3\xa9", ""},
	{"\xa1\xff", "msgpack: malformed at offset 0: string is not valid UTF-8"},
	{"\xd9\x03abc", ""},
	{"\xd9\x04abc", "msgpack: malformed at offset 0: truncated: 4-byte payload, 3 bytes left"},
	{"\xd9", "msgpack: malformed at offset 0: truncated length"},
	{"\xda\x00\x03abc", ""},
	{"\xda\x00", "msgpack: malformed at offset 0: truncated length"},
	{"\xdb\x00\x00\x00\x03abc", ""},
	{"\xdb\x00\x00\x00\x04abc", "msgpack: malformed at offset 0: truncated: 4-byte payload, 3 bytes left"},
	{"\xdb\x00\x00\x00\x05abc", "msgpack: malformed at offset 0: truncated: 5-byte payload, 3 bytes left"},
	{"\xd9\x01\xff", "msgpack: malformed at offset 0: string is not valid UTF-8"},
	{"\xc4\x02\xff\xfe", ""},
	{"\xc4\x03\xff\xfe", "msgpack: malformed at offset 0: truncated: 3-byte payload, 2 bytes left"},
	{"\xc5\x00\x01\xff", ""},
	{"\xc6\x00\x00\x00\x01\xff", ""},
	{"\xc7\x01\x05\xff", ""},
	{"\xc7\x01\x05", "msgpack: malformed at offset 0: truncated: 2-byte payload, 1 bytes left"},
	{"\xc8\x00\x01\x05\xff", ""},
	{"\xc9\x00\x00\x00\x01\x05\xff", ""},
	{"\xca\x00\x00\x00\x00", ""},
	{"\xca\x00\x00\x00", "msgpack: malformed at offset 0: truncated: 4-byte payload, 3 bytes left"},
	{"\xcb\x00\x00\x00\x00\x00\x00\x00\x00", ""},
	{"\xcb\x00\x00\x00\x00\x00\x00\x00", "msgpack: malformed at offset 0: truncated: 8-byte payload, 7 bytes left"},
	{"\xcc\x01", ""},
	{"\xcd\x00\x01", ""},
	{"\xce\x00\x00\x00\x01", ""},
	{"\xcf\x00\x00\x00\x00\x00\x00\x00\x01", ""},
	{"\xcf\x00\x00\x00\x00\x00\x00\x00", "msgpack: malformed at offset 0: truncated: 8-byte payload, 7 bytes left"},
	{"\xd0\x01", ""},
	{"\xd3\x00\x00\x00\x00\x00\x00\x00\x01", ""},
	{"\xd4\x01\x02", ""},
	{"\xd4\x01", "msgpack: malformed at offset 0: truncated: 2-byte payload, 1 bytes left"},
	{"\xd8\x01\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00", ""},
	{"\xd8\x01\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00", "msgpack: malformed at offset 0: truncated: 17-byte payload, 16 bytes left"},
	{"\x92\x91\x01\x02", ""},
	{"\x92\x90\x01", ""},
	{"\x92\x80\x01", ""},
}

// TestScanProtobufTable pins scanProtobuf: groups to the depth limit and
// one past, mismatched and unended groups, truncated tags and values.
func TestScanProtobufTable(t *testing.T) {
	runScanTable(t, "scanProtobuf", scanProtobuf, []scanCase{
		{"", ""},
		{"\b\x01", ""},
		{"\b", "protobuf: malformed at offset 0: field 1: unexpected EOF"},
		{"\x80", "protobuf: malformed at offset 0: unexpected EOF"},
		{"\x12\x02ab", ""},
		{"\x12\x03ab", "protobuf: malformed at offset 0: field 2: unexpected EOF"},
		{"\v\f", ""},
		{"\v\v\v\f\f\f", ""},
		{"\v\v\v\v\f\f\f\f", "protobuf: nesting too deep at offset 3: more than 3 levels of groups"},
		{"\v\x14", "protobuf: malformed at offset 1: end of group 2 without its start"},
		{"\f", "protobuf: malformed at offset 0: end of group 1 without its start"},
		{"\v", "protobuf: malformed at offset 1: group 1 not ended"},
		{"\v\b\x01\f", ""},
		{"\v\b", "protobuf: malformed at offset 1: field 1: unexpected EOF"},
		{"\r\x00\x00\x00\x00", ""},
		{"\t\x00\x00\x00\x00\x00\x00\x00\x00", ""},
		{"\t\x00", "protobuf: malformed at offset 0: field 1: unexpected EOF"},
		{"\x0f", "protobuf: malformed at offset 0: field 1: proto: cannot parse reserved wire type"},
	})
}

// TestScanJSONDeepEmpty: empty containers at every depth around the
// scanner's fixed 16-level buffers and at the default limit, with the
// default limits (the table's small ones never reach the buffers' end).
func TestScanJSONDeepEmpty(t *testing.T) {
	for _, d := range []int{1, 15, 16, 17, DefaultLimits.MaxDepth} {
		for _, open := range []string{"[", "{\"k\":"} {
			closer := "]"
			if open != "[" {
				closer = "}"
			}
			// d levels, the innermost empty
			in := strings.Repeat(open, d-1) + "[]" + strings.Repeat(closer, d-1)
			if err := scanJSON([]byte(in), DefaultLimits); err != nil {
				t.Errorf("%d levels of %q: %v", d, open, err)
			}
		}
	}
	in := strings.Repeat("[", DefaultLimits.MaxDepth) + "[]" + strings.Repeat("]", DefaultLimits.MaxDepth)
	if err := scanJSON([]byte(in), DefaultLimits); !errors.Is(err, ErrDepth) {
		t.Errorf("%d levels: %v, want ErrDepth", DefaultLimits.MaxDepth+1, err)
	}
}
