package codec_test

import (
	"bytes"
	"testing"
	"time"

	"github.com/wirebench/wirebench/api"
	"github.com/wirebench/wirebench/codec"
	"github.com/wirebench/wirebench/internal/testkit"
)

// The repeat fuzz targets build a body as head + unit×n + tail, so that a
// few mutated bytes reach the shapes that matter for third-party decoders:
// millions of nested containers, huge element counts, long runs. Issue
// 10's crash (8 M nested msgpack arrays overflowing the goroutine stack in
// the library's recursive skip) is the seed {0x81 0xa1 'x'} + {0x91}×n +
// {0xc0} with n grown by the fuzzer; a fatal stack overflow fails the
// fuzz run. Bodies are capped at the server's default body limit.
const maxFuzzBody = 8 << 20

func repeatBody(head, unit []byte, n uint32, tail []byte) []byte {
	if len(unit) == 0 {
		n = 0
	} else {
		n = min(n, uint32((maxFuzzBody-len(head)-len(tail))/len(unit)))
	}
	b := make([]byte, 0, len(head)+int(n)*len(unit)+len(tail))
	b = append(b, head...)
	b = append(b, bytes.Repeat(unit, int(n))...)
	return append(b, tail...)
}

// fuzzRepeat decodes the body into every request type with each codec,
// bounding the time one decode may take: the scanners are linear, so a
// slow decode is a quadratic path or a hang.
func fuzzRepeat(f *testing.F, codecs []string, seeds [][4][]byte) {
	for _, s := range seeds {
		f.Add(s[0], s[1], uint32(len(s[2])), s[3])
	}
	f.Fuzz(func(t *testing.T, head, unit []byte, n uint32, tail []byte) {
		if len(head)+len(tail) > maxFuzzBody {
			return
		}
		body := repeatBody(head, unit, n, tail)
		for _, name := range codecs {
			c := codec.MustLookup(name).Codec
			for _, v := range []any{new(api.User), new(api.Todo), new(api.EchoRequest), new(any)} {
				if _, ok := v.(*any); ok && name == "protobuf" {
					continue
				}
				start := time.Now()
				_ = c.Unmarshal(body, v)
				// Generous: 8 MiB is scanned in milliseconds; a decoder
				// that recursed or copied per level took seconds.
				if d := time.Since(start); testkit.Timing() && d > 5*time.Second {
					t.Fatalf("%s: %d-byte body took %v into %T", name, len(body), d, v)
				}
			}
		}
	})
}

// n is given as a slice's length in the seeds, to keep them readable.
func reps(n int) []byte { return make([]byte, n) }

func FuzzMsgpackRepeat(f *testing.F) {
	fuzzRepeat(f, []string{"msgpack"}, [][4][]byte{
		{{0x81, 0xa1, 'x'}, {0x91}, reps(3), {0xc0}},       // nested arrays (issue 10)
		{{0x81, 0xa1, 'x'}, {0x81, 0xa0}, reps(3), {0xc0}}, // nested maps
		{{0x81, 0xa4, 'n', 'a', 'm', 'e'}, {0xdc, 0, 1}, reps(2), {0xc0}},
		{{0xdd, 0, 0, 0, 3}, {0xc0}, reps(3), nil}, // many elements
	})
}

func FuzzCBORRepeat(f *testing.F) {
	fuzzRepeat(f, []string{"cbor"}, [][4][]byte{
		{{0xa1, 0x61, 'x'}, {0x81}, reps(3), {0xf6}},
		{{0xa1, 0x61, 'x'}, {0xa1, 0x60}, reps(3), {0xf6}},
		{{0xa1, 0x61, 'x'}, {0x9f}, reps(3), {0xff, 0xff, 0xff}},
		{{0xa1, 0x61, 'x'}, {0xd8, 0x64}, reps(3), {0xf6}},
	})
}

func FuzzJSONRepeat(f *testing.F) {
	fuzzRepeat(f, []string{"json", "json-fast"}, [][4][]byte{
		{[]byte(`{"x":`), []byte("["), reps(3), []byte("]]]}")},
		{[]byte(`{"name":`), []byte(`{"a":`), reps(3), []byte("1}}}}")},
		{[]byte(`{"x":[`), []byte("0,"), reps(3), []byte("0]}")},
		{[]byte(`{"name":"`), []byte(`\ud800`), reps(3), []byte(`"}`)},
	})
}

func FuzzProtobufRepeat(f *testing.F) {
	fuzzRepeat(f, []string{"protobuf"}, [][4][]byte{
		{{0x1a, 0x01, 'e'}, {0x2b}, reps(3), {0x2c, 0x2c, 0x2c}}, // nested unknown groups
		{{0x1a, 0x01, 'e'}, {0x22, 0x00}, reps(3), nil},          // repeated submessages
		{nil, {0x12, 0x01, 'a'}, reps(3), nil},                   // repeated field
	})
}

func FuzzTOONRepeat(f *testing.F) {
	fuzzRepeat(f, []string{"toon"}, [][4][]byte{
		{[]byte("x[1]{"), []byte("a,"), reps(3), []byte("b}:\n  1,2,3,4")},
		{[]byte("x:\n"), []byte("  a:\n"), reps(3), nil},
		{[]byte("x[3]: "), []byte("1,"), reps(2), []byte("1")},
	})
}
