package resp

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"strconv"
	"strings"
	"testing"

	"github.com/wirebench/wirebench/load/clientio"
)

func parseAll(data []byte) ([]Reply, error) {
	br := bufio.NewReaderSize(bytes.NewReader(data), 64)
	var out []Reply
	var buf []byte
	for {
		var r Reply
		var err error
		buf, err = Parse(br, &r, buf)
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
		want Reply
	}{
		{"+OK\r\n", Reply{Kind: '+', Bulk: []byte("OK")}},
		{"+\r\n", Reply{Kind: '+'}}, // an empty simple string: the shortest line
		{"-ERR wrong number of arguments\r\n", Reply{Kind: '-', Bulk: []byte("ERR wrong number of arguments")}},
		{":1234\r\n", Reply{Kind: ':', Int: 1234}},
		{":-7\r\n", Reply{Kind: ':', Int: -7}},
		{"$5\r\nhello\r\n", Reply{Kind: '$', Bulk: []byte("hello")}},
		{"$0\r\n\r\n", Reply{Kind: '$', Bulk: []byte{}}},
		{"$4\r\na\r\nb\r\n", Reply{Kind: '$', Bulk: []byte("a\r\nb")}}, // binary-safe
		{"$-1\r\n", Reply{Kind: '$', Nil: true}},
		{"*-1\r\n", Reply{Kind: '*', Nil: true, Int: -1}},
		{"*0\r\n", Reply{Kind: '*'}}, // an empty array (KEYS of nothing) is no error
		{"*2\r\n$1\r\na\r\n*1\r\n:1\r\n", Reply{Kind: '*', Int: 2}},
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
		{"$" + strconv.Itoa(maxRESPBulk+1) + "\r\n", clientio.ErrTooLarge},
		{"*" + strconv.Itoa(maxRESPElems+1) + "\r\n", clientio.ErrTooLarge},
		{"*2\r\n*" + strconv.Itoa(maxRESPElems) + "\r\n", clientio.ErrTooLarge}, // nested elements count too
		{"*2147483647\r\n", clientio.ErrTooLarge},
		{tooDeep, clientio.ErrTooLarge},
		{"+" + strings.Repeat("a", maxRESPLine+1) + "\r\n", clientio.ErrTooLarge},
		{"$5\r\nhelloXX", clientio.ErrMalformed},
		{"$-2\r\n", clientio.ErrMalformed},
		{"*-2\r\n", clientio.ErrMalformed},
		{":12a\r\n", clientio.ErrMalformed},
		{":\r\n", clientio.ErrMalformed},
		{":1234567890123456789\r\n", clientio.ErrMalformed}, // 19 digits could overflow
		{"+OK\n", clientio.ErrMalformed},
		{"\r\n", clientio.ErrMalformed},
		{"%1\r\n", clientio.ErrMalformed}, // RESP3 map: not asked for
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
	// an array of exactly maxRESPElems elements is read
	if got, err := parseAll([]byte("*" + strconv.Itoa(maxRESPElems) + "\r\n" + strings.Repeat(":1\r\n", maxRESPElems))); err != nil || len(got) != 1 || got[0].Int != maxRESPElems {
		t.Errorf("an array at the limit: %v", err)
	}
	// a bulk string of exactly maxRESPBulk bytes is read
	whole := io.MultiReader(strings.NewReader("$"+strconv.Itoa(maxRESPBulk)+"\r\n"), io.LimitReader(zeros{}, maxRESPBulk), strings.NewReader("\r\n"))
	var r Reply
	if _, err := Parse(bufio.NewReader(whole), &r, nil); err != nil || len(r.Bulk) != maxRESPBulk {
		t.Errorf("a bulk string at the limit: %d bytes, %v", len(r.Bulk), err)
	}
	if got, err := parseAll([]byte(":-999999999999999999\r\n")); err != nil || got[0].Int != -999999999999999999 {
		t.Errorf("18 digits: %v %v", got, err)
	}
}

// TestAppendRESPCommand: commands are arrays of bulk strings, binary-safe.
func TestAppendRESPCommand(t *testing.T) {
	got := string(AppendCommand(nil, []byte("SET"), []byte("key:000000000001"), []byte("a\r\nb")))
	want := "*3\r\n$3\r\nSET\r\n$16\r\nkey:000000000001\r\n$4\r\na\r\nb\r\n"
	if got != want {
		t.Errorf("got %q, want %q", got, want)
	}
	if s := string(appendUint(nil, 0)) + string(appendUint(nil, 1234567)); s != "01234567" {
		t.Errorf("appendUint: %q", s)
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
		src := &clientio.CountReader{R: bytes.NewReader(data)}
		br := bufio.NewReaderSize(src, 16)
		var buf []byte
		off := 0 // bytes of data consumed by the replies so far
		for {
			var r Reply
			var err error
			buf, err = Parse(br, &r, buf)
			if err != nil {
				if !errors.Is(err, clientio.ErrMalformed) && !errors.Is(err, clientio.ErrTooLarge) && !errors.Is(err, io.ErrUnexpectedEOF) {
					t.Fatalf("error of no known kind: %v", err)
				}
				return
			}
			consumed := src.Got - br.Buffered() - off
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

// zeros reads as an endless run of '0' bytes.
type zeros struct{}

func (zeros) Read(p []byte) (int, error) {
	for i := range p {
		p[i] = '0'
	}
	return len(p), nil
}
