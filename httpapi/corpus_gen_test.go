package httpapi_test

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/fxamacker/cbor/v2"
	"github.com/vmihailenco/msgpack/v5"
	"google.golang.org/protobuf/encoding/protowire"

	"github.com/wirebench/wirebench/api"
	"github.com/wirebench/wirebench/codec"
)

// hostile is one request of the adversarial corpus.
type hostile struct {
	name   string
	ctype  string // Content-Type; the format's when empty
	coding string // Content-Encoding
	body   []byte
	status int
	codes  []string // acceptable error codes; the first is the usual one
}

// The corpus's invariant: no body contains an email with '@' (the base user
// has "no-at-sign-here"), and mutations only write bytes other than '@', so
// no request of the corpus can be a valid user: every one must fail, and
// the store must never change.
var baseUser = api.User{Name: "Ada Lovelace", Email: "no-at-sign-here", CreatedAt: time.Date(2026, 11, 22, 10, 11, 12, 123456789, time.UTC)}

var (
	malformed = []string{"malformed"}
	rejected  = []string{"malformed", "invalid_argument"} // refused by decoding or by validation
	tooLarge  = []string{"too_large"}
)

// limitDepth is the decoders' nesting limit (codec.DefaultLimits).
var limitDepth = codec.DefaultLimits.MaxDepth

// corpus builds the adversarial requests for one format: the generic
// mutations of a valid encoding, then the format's own hostile shapes.
func corpus(t *testing.T, format string, maxBody int) []hostile {
	t.Helper()
	c := codec.MustLookup(format).Codec
	base, err := c.Marshal(&baseUser)
	if err != nil {
		t.Fatal(err)
	}
	var out []hostile
	add := func(name string, body []byte, status int, codes []string) {
		out = append(out, hostile{name: name, body: body, status: status, codes: codes})
	}
	// Truncations: every prefix, the empty body included.
	for cut := 0; cut < len(base); cut += max(1, len(base)/40) {
		add(fmt.Sprintf("truncated to %d of %d bytes", cut, len(base)), base[:cut], 400, rejected)
	}
	add("the whole base (email without @)", base, 400, []string{"invalid_argument"})
	// Corruptions: one byte replaced by a byte that is never '@'.
	for i := 0; i < len(base); i += max(1, len(base)/20) {
		for _, b := range []byte{0x00, 0xff, 0xc1} {
			m := bytes.Clone(base)
			m[i] = b
			add(fmt.Sprintf("byte %d set to 0x%02x", i, b), m, 400, rejected)
		}
	}
	// Compression bombs and broken codings of the format's own bytes.
	out = append(out,
		hostile{name: "gzip bomb", coding: "gzip", body: gz(bytes.Repeat([]byte{' '}, 4*maxBody)), status: 413, codes: tooLarge},
		hostile{name: "zstd bomb", coding: "zstd", body: zst(bytes.Repeat([]byte{' '}, 4*maxBody)), status: 413, codes: tooLarge},
		hostile{name: "gzip of the base, truncated", coding: "gzip", body: gz(base)[:len(gz(base))-6], status: 400, codes: malformed},
		hostile{name: "gzip with a bad CRC", coding: "gzip", body: flipAt(gz(base), -6), status: 400, codes: malformed},
		hostile{name: "gzip of gzip under one coding", coding: "gzip", body: gz(gz(base)), status: 400, codes: rejected},
		hostile{name: "zstd of the base, truncated", coding: "zstd", body: zst(base)[:len(zst(base))-2], status: 400, codes: malformed},
		hostile{name: "zstd declaring 2^63 bytes", coding: "zstd", body: []byte{0x28, 0xb5, 0x2f, 0xfd, 0xe0, 0, 0, 0, 0, 0, 0, 0, 0x80, 0x09, 0, 0, 0}, status: 413, codes: tooLarge},
		hostile{name: "raw body labelled gzip", coding: "gzip", body: base, status: 400, codes: malformed},
		hostile{name: "body over the limit", body: append(bytes.Clone(base), make([]byte, maxBody)...), status: 413, codes: tooLarge},
	)
	var own []hostile
	switch format {
	case "json":
		own = jsonCorpus(maxBody)
	case "toon":
		own = toonCorpus(maxBody)
	case "msgpack":
		own = msgpackCorpus(t, base, maxBody)
	case "cbor":
		own = cborCorpus(t, base, maxBody)
	case "protobuf":
		own = protobufCorpus(base, maxBody)
	default:
		t.Fatalf("no corpus for %s", format)
	}
	// The deepest nesting compressed: issue 10's crash, in this format.
	for _, h := range own {
		if strings.HasPrefix(h.name, "nested") && len(h.body) > maxBody/2 {
			out = append(out, hostile{name: h.name + " under gzip", coding: "gzip", body: gz(h.body), status: h.status, codes: h.codes})
		}
	}
	return append(out, own...)
}

func flipAt(b []byte, i int) []byte {
	b = bytes.Clone(b)
	if i < 0 {
		i += len(b)
	}
	b[i] ^= 0x55
	return b
}

// badUTF8 are ill-formed sequences: a stray continuation byte, 0xff, an
// overlong NUL, a surrogate, a truncated sequence, past U+10FFFF.
var badUTF8 = []string{"\x80", "\xff", "\xc0\x80", "\xed\xa0\x80", "\xe2\x82", "\xf4\x90\x80\x80"}

func jsonCorpus(maxBody int) []hostile {
	var out []hostile
	add := func(name, body string, status int, codes []string) {
		out = append(out, hostile{name: name, body: []byte(body), status: status, codes: codes})
	}
	const tail = `"email":"no-at-sign-here"}`
	for _, n := range []int{limitDepth + 1, 100, 1000, 0} {
		a, o := n, n
		if n == 0 { // as deep as the body limit allows: 2 and 6 bytes a level
			a, o = maxBody/2-32, maxBody/6-32
		}
		add(fmt.Sprintf("nested %d arrays in an unknown field", a), `{"x":`+strings.Repeat("[", a)+strings.Repeat("]", a)+`,`+tail, 400, malformed)
		add(fmt.Sprintf("nested %d objects in name", o), `{"name":`+strings.Repeat(`{"a":`, o)+"1"+strings.Repeat("}", o)+`,`+tail, 400, malformed)
	}
	add("nested unclosed arrays filling the body", strings.Repeat("[", maxBody), 400, malformed)
	add("nesting at the limit in an unknown field", `{"x":`+strings.Repeat("[", limitDepth-1)+strings.Repeat("]", limitDepth-1)+`,`+tail, 400, []string{"invalid_argument"})
	for i, s := range badUTF8 {
		add(fmt.Sprintf("bad UTF-8 #%d in name", i), `{"name":"A`+s+`",`+tail, 400, malformed)
		add(fmt.Sprintf("bad UTF-8 #%d in a key", i), `{"na`+s+`me":"A",`+tail, 400, malformed)
		add(fmt.Sprintf("bad UTF-8 #%d outside strings", i), `{"name":"A",`+s+tail, 400, malformed)
	}
	for _, esc := range []string{`\ud800`, `\udfff`, `\ud800\u0041`, `\udc00\ud800`, `\u12`, `\x41`, `\`} {
		add("escape "+esc, `{"name":"A`+esc+`",`+tail, 400, malformed)
	}
	for _, v := range []string{`42`, `-1`, `true`, `[]`, `{}`, `["Ada"]`, `1e999`, `"\u0000"`, `null`} {
		add("name is "+v, `{"name":`+v+`,`+tail, 400, rejected)
	}
	for _, v := range []string{`"1"`, `1.5`, `99999999999999999999`, `-99999999999999999999`, `1e400`, `[]`, `true`} {
		add("id is "+v, `{"id":`+v+`,"name":"A",`+tail, 400, malformed)
	}
	for _, v := range []string{`"yesterday"`, `42`, `"2026-13-45T00:00:00Z"`, `{}`} {
		add("created_at is "+v, `{"created_at":`+v+`,"name":"A",`+tail, 400, malformed)
	}
	for _, tr := range []string{"x", "{}", `{"name":"B"}`, "\x00", "]", ",", "//c"} {
		add("trailing "+tr, `{"name":"A",`+tail+tr, 400, malformed)
	}
	for _, s := range []string{`{"name":"A",}`, `{"name" "A"}`, `{name:"A"}`, `{'name':'A'}`, `{"name":"A"`, `"just a string"`, `[]`, `nul`, `{"name":"A\n"}`, "\ufeff{}", `{"name":01}`, `{"name":-}`, `{"name":.5}`, `{"a":1,,}`, `{"a"::1}`} {
		add("syntax "+s, s, 400, rejected)
	}
	add("100k-element array", `{"x":[`+strings.Repeat("0,", 100000)+`0],`+tail, 400, []string{"invalid_argument"})
	add("name over its limit", `{"name":"`+strings.Repeat("n", api.MaxNameLen+1)+`",`+tail, 400, []string{"invalid_argument"})
	add("string over the body limit", `{"name":"`+strings.Repeat("n", maxBody)+`"}`, 413, tooLarge)
	return out
}

func toonCorpus(maxBody int) []hostile {
	var out []hostile
	add := func(name, body string, status int, codes []string) {
		out = append(out, hostile{name: name, body: []byte(body), status: status, codes: codes})
	}
	const tail = "\nemail: no-at-sign-here"
	nested := func(n int) string {
		var sb strings.Builder
		sb.WriteString("x:\n")
		for i := 1; i <= n; i++ {
			sb.WriteString(strings.Repeat(" ", 2*i) + "a:\n")
		}
		return sb.String()
	}
	for _, n := range []int{limitDepth + 1, 100, 1000} {
		add(fmt.Sprintf("nested %d objects", n), "name: A"+tail+"\n"+nested(n), 400, malformed)
		add(fmt.Sprintf("nested %d list items", n), "name: A"+tail+"\nx[1]:\n"+listNest(n, maxBody), 400, malformed)
	}
	for _, n := range []string{"9223372036854775808", "99999999999999999999999", "-1", "1e3", "0x10", "01", "", " 1"} {
		add("array length "+n, "name: A"+tail+"\nx["+n+"]: 1", 400, malformed)
	}
	add("length 2^31 with one row", "name: A"+tail+"\nx[2147483648]{a}:\n  1", 400, malformed)
	add("100k-column header", "name: A"+tail+"\nx[1]{"+cols(100000)+"}:\n  "+strings.TrimSuffix(strings.Repeat("1,", 100000), ","), 400, []string{"invalid_argument"})
	add("100k-column header with a repeat", "name: A"+tail+"\nx[1]{"+cols(100000)+",c0}:\n  1", 400, malformed)
	for i, s := range badUTF8 {
		add(fmt.Sprintf("bad UTF-8 #%d in name", i), "name: A"+s+tail, 400, malformed)
		add(fmt.Sprintf("bad UTF-8 #%d in a key", i), "na"+s+"me: A"+tail, 400, malformed)
		add(fmt.Sprintf("bad UTF-8 #%d in a quoted string", i), `name: "A`+s+`"`+tail, 400, malformed)
	}
	for _, v := range []string{"42", "true", "null", "[2]: a,b", `"\u0041"`, `"unterminated`, `"bad \q escape"`} {
		add("name is "+v, "name: "+v+tail, 400, rejected)
	}
	for _, v := range []string{`"1"`, "1.5", "99999999999999999999", "x", "[1]: 1"} {
		add("id is "+v, "id: "+v+"\nname: A"+tail, 400, malformed)
	}
	for _, s := range []string{"name: A\nname: B" + tail, "name A" + tail, " name: A" + tail, "name: A\n   email: x", "\tname: A" + tail,
		"x[2]: 1" + tail, "x[1]: 1,2" + tail, "x[2]{a,b}:\n  1,2" + tail, "x[1]{a,b}:\n  1" + tail, "x[1]{a,a}:\n  1,2" + tail,
		"x[1|]: 1,2" + tail, "x[1]{a|b}:\n  1,2" + tail, "x[1]:\n  - 1\n  - 2" + tail, "name: A\n\n  b: 1" + tail, "x[1:]: 1" + tail} {
		add("syntax "+strings.ReplaceAll(s, "\n", "⏎"), s, 400, rejected)
	}
	add("name over its limit", "name: "+strings.Repeat("n", api.MaxNameLen+1)+tail, 400, []string{"invalid_argument"})
	add("string over the body limit", "name: "+strings.Repeat("n", maxBody)+tail, 413, tooLarge)
	add("nested list items filling the body", listNest(1000000, maxBody), 400, malformed)
	return out
}

// listNest is n nested one-item lists, cut to fit size bytes.
func listNest(n, size int) string {
	var sb strings.Builder
	sb.WriteString("x[1]:\n")
	for i := 1; i <= n && sb.Len()+2*i+7 <= size; i++ {
		sb.WriteString(strings.Repeat(" ", 2*i) + "- [1]:\n")
	}
	return sb.String()
}

func cols(n int) string {
	var sb strings.Builder
	for i := range n {
		if i > 0 {
			sb.WriteByte(',')
		}
		fmt.Fprintf(&sb, "c%d", i)
	}
	return sb.String()
}

// msgpackCorpus: hand-made headers, since the library writes only valid ones.
func msgpackCorpus(t *testing.T, base []byte, maxBody int) []hostile {
	var out []hostile
	add := func(name string, body []byte, status int, codes []string) {
		out = append(out, hostile{name: name, body: body, status: status, codes: codes})
	}
	enc := func(v any) []byte {
		b, err := msgpack.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	head := []byte{0x81, 0xa1, 'x'} // {"x": ...}
	for _, n := range []int{limitDepth + 1, 100, 1000, maxBody/2 - 8} {
		add(fmt.Sprintf("nested %d arrays", 2*n), cat(head, bytes.Repeat([]byte{0x91}, 2*n), []byte{0xc0}), 400, malformed)
		add(fmt.Sprintf("nested %d maps", n), cat(head, bytes.Repeat([]byte{0x81, 0xa0}, n), []byte{0xc0}), 400, malformed)
	}
	add("nesting at the limit", cat([]byte{0x82, 0xa5, 'e', 'm', 'a', 'i', 'l', 0xa1, 'e', 0xa1, 'x'}, bytes.Repeat([]byte{0x91}, limitDepth-1), []byte{0xc0}), 400, []string{"invalid_argument"})
	for _, h := range [][]byte{
		{0xdc, 0xff, 0xff}, {0xdd, 0xff, 0xff, 0xff, 0xff}, {0xde, 0xff, 0xff}, {0xdf, 0xff, 0xff, 0xff, 0xff},
		{0xd9, 0xff}, {0xda, 0xff, 0xff}, {0xdb, 0xff, 0xff, 0xff, 0xff}, {0xc4, 0xff}, {0xc5, 0xff, 0xff}, {0xc6, 0x7f, 0xff, 0xff, 0xff},
		{0xc7, 0xff, 0x01}, {0xc8, 0xff, 0xff, 0x01}, {0xc9, 0xff, 0xff, 0xff, 0xff, 0x01}, {0xd8, 0xff},
	} {
		add(fmt.Sprintf("huge length % x", h), cat(head, h, []byte{0xc0}), 400, malformed)
		add(fmt.Sprintf("huge length % x at top level", h), h, 400, malformed)
	}
	add("2^20+1 elements declared, 1000 sent", cat(head, []byte{0xdd, 0, 0x10, 0, 1}, make([]byte, 1000)), 400, malformed)
	for i, s := range badUTF8 {
		add(fmt.Sprintf("bad UTF-8 #%d in name", i), enc(map[string]any{"name": "A" + s, "email": "e"}), 400, malformed)
		add(fmt.Sprintf("bad UTF-8 #%d in a key", i), enc(map[string]any{"na" + s: "A", "email": "e"}), 400, malformed)
	}
	for _, v := range []any{42, true, []string{"a"}, map[string]int{"a": 1}, 1.5, []byte("A"), nil} {
		add(fmt.Sprintf("name is %T", v), enc(map[string]any{"name": v, "email": "e"}), 400, rejected)
	}
	for _, v := range []any{"1", 1.5, []int{1}, true, uint64(1 << 63)} {
		// msgpack wraps 2^63 into a negative int64 (the id is ignored):
		// refused by validation, not decoding.
		add(fmt.Sprintf("id is %T %v", v, v), enc(map[string]any{"id": v, "name": "A", "email": "e"}), 400, rejected)
	}
	for _, v := range []any{"yesterday", 42, []int{1}} {
		add(fmt.Sprintf("created_at is %T", v), enc(map[string]any{"created_at": v, "name": "A", "email": "e"}), 400, malformed)
	}
	// nil for a time.Time made the library panic (found by fuzzing):
	// net/http dropped the connection without an answer.
	add("created_at is nil", enc(map[string]any{"created_at": nil, "name": "A", "email": "e"}), 400, rejected)
	add("created_at is nil, alone", enc(map[string]any{"created_at": nil}), 400, rejected)
	add("created_at is a bad timestamp extension", cat([]byte{0x81, 0xaa}, []byte("created_at"), []byte{0xd6, 0xff, 1, 2, 3}), 400, rejected)
	for _, tr := range [][]byte{{0xc0}, {0x00}, {0xc1}, base, {0x91}} {
		add(fmt.Sprintf("trailing % x", tr[:min(4, len(tr))]), cat(base, tr), 400, malformed)
	}
	for _, b := range [][]byte{{0xc1}, {0x81}, {0x92, 0x01}, {0xa5, 'a'}, {0x80, 0x80}, {0xd4}, {0xcb, 1, 2}} {
		add(fmt.Sprintf("syntax % x", b), b, 400, rejected)
	}
	add("top-level array", enc([]any{"A", "e"}), 400, malformed)
	add("string over the body limit", cat([]byte{0x81, 0xa4, 'n', 'a', 'm', 'e', 0xdb}, be32(uint32(maxBody)), make([]byte, maxBody)), 413, tooLarge)
	return out
}

func cborCorpus(t *testing.T, base []byte, maxBody int) []hostile {
	var out []hostile
	add := func(name string, body []byte, status int, codes []string) {
		out = append(out, hostile{name: name, body: body, status: status, codes: codes})
	}
	enc := func(v any) []byte {
		b, err := cbor.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	head := []byte{0xa1, 0x61, 'x'}
	for _, n := range []int{limitDepth + 1, 100, 1000, maxBody/2 - 8} {
		add(fmt.Sprintf("nested %d arrays", 2*n), cat(head, bytes.Repeat([]byte{0x81}, 2*n), []byte{0xf6}), 400, malformed)
		add(fmt.Sprintf("nested %d maps", n), cat(head, bytes.Repeat([]byte{0xa1, 0x60}, n), []byte{0xf6}), 400, malformed)
		add(fmt.Sprintf("nested %d tags", n), cat(head, bytes.Repeat([]byte{0xd8, 0x64}, n), []byte{0xf6}), 400, malformed)
		add(fmt.Sprintf("nested %d indefinite arrays", n), cat(head, bytes.Repeat([]byte{0x9f}, n), []byte{0xf6}), 400, malformed)
	}
	for _, h := range [][]byte{
		{0x9a, 0xff, 0xff, 0xff, 0xff}, {0x9b, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff}, {0xba, 0xff, 0xff, 0xff, 0xff},
		{0xbb, 0x7f, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff}, {0x7a, 0xff, 0xff, 0xff, 0xff}, {0x7b, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff},
		{0x5a, 0xff, 0xff, 0xff, 0xff}, {0x5b, 0x80, 0, 0, 0, 0, 0, 0, 0}, {0x99, 0xff, 0xff},
	} {
		add(fmt.Sprintf("huge length % x", h), cat(head, h), 400, malformed)
		add(fmt.Sprintf("huge length % x at top level", h), h, 400, malformed)
	}
	for i, s := range badUTF8 {
		add(fmt.Sprintf("bad UTF-8 #%d in name", i), cat([]byte{0xa2, 0x64}, []byte("name"), []byte{byte(0x60 + len(s) + 1), 'A'}, []byte(s), []byte{0x65}, []byte("email"), []byte{0x61, 'e'}), 400, malformed)
		add(fmt.Sprintf("bad UTF-8 #%d in a key", i), cat([]byte{0xa1, byte(0x60 + len(s))}, []byte(s), []byte{0x61, 'A'}), 400, malformed)
	}
	for _, v := range []any{42, true, []string{"a"}, map[string]int{"a": 1}, 1.5, []byte("A")} {
		add(fmt.Sprintf("name is %T", v), enc(map[string]any{"name": v, "email": "e"}), 400, rejected)
	}
	for _, v := range []any{"1", 1.5, []int{1}, true, uint64(1 << 63)} {
		add(fmt.Sprintf("id is %T %v", v, v), enc(map[string]any{"id": v, "name": "A", "email": "e"}), 400, malformed)
	}
	for _, v := range []any{"yesterday", []int{1}, map[string]int{}} {
		add(fmt.Sprintf("created_at is %T", v), enc(map[string]any{"created_at": v, "name": "A", "email": "e"}), 400, malformed)
	}
	add("created_at is null", enc(map[string]any{"created_at": nil, "name": "A", "email": "e"}), 400, rejected)
	add("created_at is undefined", cat([]byte{0xa1, 0x6a}, []byte("created_at"), []byte{0xf7}), 400, rejected)
	for _, tr := range [][]byte{{0xf6}, {0x00}, {0xff}, base, {0x1c}} {
		add(fmt.Sprintf("trailing % x", tr[:min(4, len(tr))]), cat(base, tr), 400, malformed)
	}
	for _, b := range [][]byte{{0x1c}, {0xff}, {0xa1}, {0x82, 0x01}, {0x7f, 0x61, 'a'}, {0x5f, 0x61, 'a', 0xff}, {0xf8, 0x10}, {0xa2, 0x61, 'a', 1, 0x61, 'a', 2, 0x64}, {0xc1, 0x61, 'x'}} {
		add(fmt.Sprintf("syntax % x", b), b, 400, rejected)
	}
	add("string over the body limit", cat([]byte{0xa1, 0x64, 'n', 'a', 'm', 'e', 0x7a}, be32(uint32(maxBody)), make([]byte, maxBody)), 413, tooLarge)
	return out
}

func protobufCorpus(base []byte, maxBody int) []hostile {
	var out []hostile
	add := func(name string, body []byte, status int, codes []string) {
		out = append(out, hostile{name: name, body: body, status: status, codes: codes})
	}
	email := protowire.AppendString(protowire.AppendTag(nil, 3, protowire.BytesType), "no-at-sign-here")
	for _, n := range []int{limitDepth + 1, 100, 1000, maxBody/2 - 16} {
		g := cat(bytes.Repeat([]byte{0x2b}, n), bytes.Repeat([]byte{0x2c}, n)) // field 5 groups
		if len(g) > maxBody {
			g = bytes.Repeat([]byte{0x2b}, n) // unterminated: still too deep first
		}
		add(fmt.Sprintf("nested %d unknown groups", n), cat(email, g), 400, malformed)
		// created_at (field 4) holding itself: nested length-delimited messages.
		add(fmt.Sprintf("nested %d messages in created_at", n), cat(email, nestMsg(min(n, 5000))), 400, rejected)
	}
	add("groups at the limit", cat(email, bytes.Repeat([]byte{0x2b}, limitDepth), bytes.Repeat([]byte{0x2c}, limitDepth)), 400, []string{"invalid_argument"})
	for _, l := range []uint64{1 << 31, 1<<32 - 1, 1 << 62, 1<<64 - 1, uint64(maxBody)} {
		add(fmt.Sprintf("name length %d", l), cat(email, protowire.AppendVarint([]byte{0x12}, l), []byte("A")), 400, malformed)
	}
	for i, s := range badUTF8 {
		add(fmt.Sprintf("bad UTF-8 #%d in name", i), cat(email, protowire.AppendString([]byte{0x12}, "A"+s)), 400, malformed)
		add(fmt.Sprintf("bad UTF-8 #%d in email", i), protowire.AppendString([]byte{0x1a}, "e"+s), 400, malformed)
	}
	for _, b := range [][]byte{
		{0x08}, {0x08, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01}, {0x0e}, {0x0f}, {0x00, 0x01}, {0x2c},
		{0x2b}, {0x2b, 0x34}, {0x12}, {0x12, 0x05, 'a'}, {0x0d, 1, 2}, {0x09, 1, 2, 3}, {0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff},
		{0x22, 0x03, 0x08, 0x80, 0x80}, {0x22, 0x02, 0x10, 0xff}, {0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x01, 0x00},
	} {
		add(fmt.Sprintf("syntax % x", b), cat(email, b), 400, malformed)
	}
	add("timestamp out of range", cat(email, []byte{0x22, 0x0b, 0x08}, protowire.AppendVarint(nil, 1<<62), []byte{0x10, 0x01}), 400, rejected)
	add("timestamp nanos past 1e9", cat(email, []byte{0x22, 0x06, 0x08, 0x01, 0x10}, protowire.AppendVarint(nil, 2e9)), 400, rejected)
	add("name over its limit", cat(email, protowire.AppendString([]byte{0x12}, strings.Repeat("n", api.MaxNameLen+1))), 400, []string{"invalid_argument"})
	add("string over the body limit", cat(email, protowire.AppendVarint([]byte{0x12}, uint64(maxBody)), make([]byte, maxBody)), 413, tooLarge)
	return out
}

// nestMsg is field 4 holding field 4 holding ... n levels, innermost empty.
func nestMsg(n int) []byte {
	var b []byte
	for range n {
		b = protowire.AppendBytes(protowire.AppendTag(nil, 4, protowire.BytesType), b)
	}
	return b
}

func cat(parts ...[]byte) []byte { return bytes.Join(parts, nil) }

func be32(n uint32) []byte { return binary.BigEndian.AppendUint32(nil, n) }
