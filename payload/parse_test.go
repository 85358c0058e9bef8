package payload

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"testing"
	"testing/iotest"
)

func TestParseKeepsOrderTokensDuplicates(t *testing.T) {
	v, err := parseValue([]byte(` {"b":1.50,"a":[1e5,-0,"x\u00e9\ud83d\ude00"],"b":null} `), 64)
	if err != nil {
		t.Fatal(err)
	}
	got := string(appendJSON(nil, v))
	want := `{"b":1.50,"a":[1e5,-0,"xé😀"],"b":null}`
	if got != want {
		t.Fatalf("got %s, want %s", got, want)
	}
}

func TestParseErrors(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{`{"a":}`, "unexpected '}'"},
		{`[1,]`, "unexpected ']'"},
		{`{"a" 1}`, "want ':'"},
		{`01`, "data after the value"},
		{`1.`, "no digit after '.'"},
		{`"a` + "\x01" + `"`, "control character"},
		{"\"\xff\"", "invalid UTF-8"},
		{`[[[1]]]`, "nesting deeper than 2 levels"},
		{`tru`, "unexpected 't'"},
	} {
		_, err := parseValue([]byte(c.in), 2)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q: got %v, want %q", c.in, err, c.want)
		}
	}
}

// splitAll runs the splitter over in and parses each sample.
func splitAll(in string, maxSample int) ([]string, error) {
	sp := newSplitter(strings.NewReader(in), maxSample)
	var out []string
	for {
		raw, _, _, err := sp.next()
		if err == io.EOF {
			return out, nil
		}
		if err != nil {
			return out, err
		}
		v, err := parseValue(raw, 64)
		if err != nil {
			return out, err
		}
		out = append(out, string(appendJSON(nil, v)))
	}
}

func TestSplitter(t *testing.T) {
	for _, c := range []struct {
		in   string
		want []string
	}{
		{`{"a":1}`, []string{`{"a":1}`}},
		{"\xef\xbb\xbf {\"a\":\"}]\\\"\"}\n{\"b\":[2]}\n", []string{`{"a":"}]\""}`, `{"b":[2]}`}},
		{` [ {"a":1} , 2 ,"s",[3],null ] `, []string{`{"a":1}`, `2`, `"s"`, `[3]`, `null`}},
		{`[]`, nil},
		{"1 2\ntrue", []string{"1", "2", "true"}},
	} {
		got, err := splitAll(c.in, 1<<20)
		if err != nil || strings.Join(got, "|") != strings.Join(c.want, "|") {
			t.Errorf("%q: got %q, %v; want %q", c.in, got, err, c.want)
		}
	}
	for _, c := range []struct{ in, want string }{
		{`[1 2]`, "want ','"},
		{`[1,2`, "end of input"},
		{`[1] x`, "data after the top-level array"},
		{`{"a":"` + strings.Repeat("x", 100) + `"}`, "longer than 64 bytes"},
		{``, "no JSON value"},
	} {
		if _, err := splitAll(c.in, 64); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q: got %v, want %q", c.in, err, c.want)
		}
	}
	if _, err := splitAll(`{"a":"`+strings.Repeat("x", 100)+`"}`, 64); !errors.Is(err, errTooLarge) {
		t.Errorf("a long sample: %v, want errTooLarge", err)
	}
}

// FuzzParse checks the parser against encoding/json: the same inputs are
// valid, and what it reads is written back as JSON encoding/json reads
// to the same value.
func FuzzParse(f *testing.F) {
	for _, s := range []string{`{"a":[1,2.5e3,"x\n",true,null]}`, `[]`, `"\ud83d\ude00"`, `-0.0e+1`, `{"a":{"a":{}}}`, `[1,]`, "\"\xff\""} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		v, err := parseValue(data, 1000)
		valid := json.Valid(data)
		if err == nil && !valid {
			t.Fatalf("accepted what encoding/json refuses: %q", data)
		}
		if err != nil {
			if valid && !strings.Contains(err.Error(), "invalid UTF-8") && !strings.Contains(err.Error(), "nesting") {
				t.Fatalf("refused valid JSON %q: %v", data, err)
			}
			return
		}
		out := appendJSON(nil, v)
		var a, b any
		if json.Unmarshal(data, &a) != nil || json.Unmarshal(out, &b) != nil {
			t.Fatalf("%q → %q does not decode", data, out)
		}
		ja, _ := json.Marshal(a)
		jb, _ := json.Marshal(b)
		if string(ja) != string(jb) {
			t.Fatalf("%q → %q: %s != %s", data, out, ja, jb)
		}
	})
}

// FuzzSplit checks the splitter never panics, and that on a JSON array
// it gives exactly the elements encoding/json sees.
func FuzzSplit(f *testing.F) {
	for _, s := range []string{"[1,{\"a\":\"]\"},[2]]", "{\"a\":1}\n{\"b\":2}", "[", "1 2 3", "\"a\\\"\" x"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		got, err := splitAll(string(data), 1<<16)
		var arr []json.RawMessage
		isArr := strings.HasPrefix(strings.TrimLeft(string(data), " \t\r\n"), "[")
		if isArr && json.Unmarshal(data, &arr) == nil && err == nil && len(arr) != len(got) {
			t.Fatalf("%q: %d samples, encoding/json sees %d elements", data, len(got), len(arr))
		}
	})
}

// splitTrace is every sample's bytes, line and offset, and the error that
// ended the split.
func splitTrace(r io.Reader, maxSample int, bytewise bool) string {
	sp := newSplitter(r, maxSample)
	sp.bytewise = bytewise
	var b strings.Builder
	for {
		raw, line, off, err := sp.next()
		if err != nil {
			fmt.Fprintf(&b, "end %v at line %d", err, sp.line)
			return b.String()
		}
		fmt.Fprintf(&b, "%d:%d %q\n", line, off, raw)
	}
}

// FuzzSplitChunks: the splitter scans its reader's buffer a chunk at a
// time; read a byte at a time it finds the same samples, lines, offsets
// and errors, whatever falls on a chunk's edge (an escape, a string's or a
// scalar's end, a newline). Its fast path for objects and arrays finds
// what the byte-at-a-time scan finds.
func FuzzSplitChunks(f *testing.F) {
	for _, s := range []string{"[1,{\"a\":\"]\\\"\"},[2]]", "{\"a\":1}\n{\"b\":\"x\\\\\"}\n\n12\n\"s\"", "[", "1 2 3", "\"a\\\"\" x", "tru\"e", "[1,2", "{\"a\":\"\n\"}\n  7"} {
		f.Add([]byte(s), uint8(64))
	}
	f.Fuzz(func(t *testing.T, data []byte, maxSample uint8) {
		whole := splitTrace(bytes.NewReader(data), int(maxSample)+1, false)
		if one := splitTrace(iotest.OneByteReader(bytes.NewReader(data)), int(maxSample)+1, false); one != whole {
			t.Fatalf("%q: whole:\n%s\na byte at a time:\n%s", data, whole, one)
		}
		if ref := splitTrace(bytes.NewReader(data), int(maxSample)+1, true); ref != whole {
			t.Fatalf("%q: fast path:\n%s\nbytewise:\n%s", data, whole, ref)
		}
	})
}
