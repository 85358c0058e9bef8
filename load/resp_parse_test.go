package load

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"strconv"
	"strings"
	"testing"
)

func parseAll(data []byte) ([]respReply, error) {
	br := bufio.NewReaderSize(bytes.NewReader(data), 64)
	var out []respReply
	var buf []byte
	for {
		var r respReply
		var err error
		buf, err = parseRESP(br, &r, buf)
		if err != nil {
			if errors.Is(err, io.ErrUnexpectedEOF) && len(out) > 0 && br.Buffered() == 0 {
				return out, nil // clean end after the last reply
			}
			return out, err
		}
		r.Bulk = append([]byte(nil), r.Bulk...)
		out = append(out, r)
	}
}

// TestParseRESP pins the parser's answer for each reply type and edge.
func TestParseRESP(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want respReply
	}{
		{"+OK\r\n", respReply{Kind: '+', Bulk: []byte("OK")}},
		{"-ERR wrong number of arguments\r\n", respReply{Kind: '-', Bulk: []byte("ERR wrong number of arguments")}},
		{":1234\r\n", respReply{Kind: ':', Int: 1234}},
		{":-7\r\n", respReply{Kind: ':', Int: -7}},
		{"$5\r\nhello\r\n", respReply{Kind: '$', Bulk: []byte("hello")}},
		{"$0\r\n\r\n", respReply{Kind: '$', Bulk: []byte{}}},
		{"$4\r\na\r\nb\r\n", respReply{Kind: '$', Bulk: []byte("a\r\nb")}}, // binary-safe
		{"$-1\r\n", respReply{Kind: '$', Nil: true}},
		{"*-1\r\n", respReply{Kind: '*', Nil: true, Int: -1}},
		{"*2\r\n$1\r\na\r\n*1\r\n:1\r\n", respReply{Kind: '*', Int: 2}},
	} {
		got, err := parseAll([]byte(tc.in))
		if err != nil || len(got) != 1 {
			t.Errorf("%q: %v %v", tc.in, got, err)
			continue
		}
		g := got[0]
		if g.Kind != tc.want.Kind || g.Nil != tc.want.Nil || g.Int != tc.want.Int || !bytes.Equal(g.Bulk, tc.want.Bulk) {
			t.Errorf("%q: got %+v, want %+v", tc.in, g, tc.want)
		}
	}
}

// TestParseRESPLimits: every limit refuses one past it, with ErrTooLarge,
// before allocating; malformed replies are ErrMalformed.
func TestParseRESPLimits(t *testing.T) {
	deep := strings.Repeat("*1\r\n", maxRESPDepth) + ":1\r\n"
	tooDeep := strings.Repeat("*1\r\n", maxRESPDepth+1) + ":1\r\n"
	for _, tc := range []struct {
		in   string
		want error
	}{
		{"$" + strconv.Itoa(maxRESPBulk+1) + "\r\n", ErrTooLarge},
		{"*" + strconv.Itoa(maxRESPElems+1) + "\r\n", ErrTooLarge},
		{"*2\r\n*" + strconv.Itoa(maxRESPElems) + "\r\n", ErrTooLarge}, // nested elements count too
		{"*2147483647\r\n", ErrTooLarge},
		{tooDeep, ErrTooLarge},
		{"+" + strings.Repeat("a", maxRESPLine+1) + "\r\n", ErrTooLarge},
		{"$5\r\nhelloXX", ErrMalformed},
		{"$-2\r\n", ErrMalformed},
		{"*-2\r\n", ErrMalformed},
		{":12a\r\n", ErrMalformed},
		{":\r\n", ErrMalformed},
		{":1234567890123456789\r\n", ErrMalformed}, // 19 digits could overflow
		{"+OK\n", ErrMalformed},
		{"\r\n", ErrMalformed},
		{"%1\r\n", ErrMalformed}, // RESP3 map: not asked for
		{"$5\r\nhel", io.ErrUnexpectedEOF},
		{"+OK", io.ErrUnexpectedEOF},
	} {
		_, err := parseAll([]byte(tc.in))
		if !errors.Is(err, tc.want) {
			name := tc.in
			if len(name) > 40 {
				name = name[:40] + "..."
			}
			t.Errorf("%q: err %v, want %v", name, err, tc.want)
		}
	}
	if got, err := parseAll([]byte(deep)); err != nil || len(got) != 1 {
		t.Errorf("nesting at the limit (%d): %v", maxRESPDepth, err)
	}
	if got, err := parseAll([]byte("+" + strings.Repeat("a", maxRESPLine-1) + "\r\n")); err != nil || len(got[0].Bulk) != maxRESPLine-1 {
		t.Errorf("a line at the limit: %v", err)
	}
	if got, err := parseAll([]byte(":-999999999999999999\r\n")); err != nil || got[0].Int != -999999999999999999 {
		t.Errorf("18 digits: %v %v", got, err)
	}
}

// TestAppendRESPCommand: commands are arrays of bulk strings, binary-safe.
func TestAppendRESPCommand(t *testing.T) {
	got := string(appendRESPCommand(nil, []byte("SET"), []byte("key:000000000001"), []byte("a\r\nb")))
	want := "*3\r\n$3\r\nSET\r\n$16\r\nkey:000000000001\r\n$4\r\na\r\nb\r\n"
	if got != want {
		t.Errorf("got %q, want %q", got, want)
	}
	if s := string(appendUint(nil, 0)) + string(appendUint(nil, 1234567)); s != "01234567" {
		t.Errorf("appendUint: %q", s)
	}
}

// TestKVKeysAndValues: keys are redis-benchmark's, values are derived
// from keys, sized exactly, and differ between keys.
func TestKVKeysAndValues(t *testing.T) {
	if k := string(appendKVKey(nil, 1234)); k != "key:000000001234" {
		t.Errorf("key %q", k)
	}
	if v := string(appendKVValue(nil, 1234, 30)); v != "000000001234.000000001234.0000" {
		t.Errorf("value %q", v)
	}
	for _, size := range []int{1, 12, 13, 14, 128, 1000} {
		a, b := appendKVValue([]byte("prefix"), 5, size), appendKVValue(nil, 6, size)
		if len(a) != size+6 || len(b) != size || string(a[6:]) == string(b) && size > 11 {
			t.Errorf("size %d: %q %q", size, a, b)
		}
	}
}

// FuzzParseRESP: any input parses or fails cleanly; a parsed bulk string
// is exactly the bytes its header announced, and no reply is over the limits.
func FuzzParseRESP(f *testing.F) {
	for _, s := range []string{"+OK\r\n", "-ERR x\r\n", ":12\r\n", "$3\r\nabc\r\n", "$-1\r\n", "*2\r\n$1\r\na\r\n:1\r\n",
		"*1\r\n*1\r\n*1\r\n+x\r\n", "$5\r\nab", "*3\r\n", ":-0\r\n", "$0\r\n\r\n+OK\r\n"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		src := &gotReader{r: bytes.NewReader(data)}
		br := bufio.NewReaderSize(src, 16)
		var buf []byte
		off := 0 // bytes of data consumed by the replies so far
		for {
			var r respReply
			var err error
			buf, err = parseRESP(br, &r, buf)
			if err != nil {
				if !errors.Is(err, ErrMalformed) && !errors.Is(err, ErrTooLarge) && !errors.Is(err, io.ErrUnexpectedEOF) {
					t.Fatalf("error of no known kind: %v", err)
				}
				return
			}
			consumed := src.got - br.Buffered() - off
			if consumed < 3 { // the shortest reply is "+\r\n"
				t.Fatalf("a reply consumed %d bytes", consumed)
			}
			if r.Kind == '$' && !r.Nil {
				hdr := bytes.IndexByte(data[off:], '\n') + 1
				if !bytes.Equal(r.Bulk, data[off+hdr:off+hdr+len(r.Bulk)]) || consumed != hdr+len(r.Bulk)+2 {
					t.Fatalf("bulk %q does not match its input", r.Bulk)
				}
			}
			if len(r.Bulk) > maxRESPBulk {
				t.Fatalf("bulk of %d bytes", len(r.Bulk))
			}
			off += consumed
		}
	})
}
