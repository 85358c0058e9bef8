package codec

import (
	"strings"
	"testing"

	"github.com/vmihailenco/msgpack/v5"
)

// fastLims are the limits the fast scanners are checked under: the
// default, the tables' small ones, and the edges (nothing nested, one
// element).
var fastLims = []Limits{DefaultLimits, small, {MaxDepth: 0, MaxItems: 0}, {MaxDepth: 1, MaxItems: 1}, {MaxDepth: 64, MaxItems: 2}}

// agree fails t unless the fast scanner's answer is the exact one's.
func agree(t *testing.T, name string, fast func([]byte, Limits) bool, exact func([]byte, Limits) error, in []byte) {
	t.Helper()
	for _, lim := range fastLims {
		b := make([]byte, len(in)) // exactly as long as its capacity
		copy(b, in)
		err := exact(b, lim)
		if ok := fast(b, lim); ok != (err == nil) {
			t.Fatalf("%s(%q, %+v) = %v, the exact scanner says %v", name, in, lim, ok, err)
		}
	}
}

// TestFastScannersAgreeOnTables: on every input of the scanners' tables,
// under every limit, the fast pass accepts exactly what the exact one does.
func TestFastScannersAgreeOnTables(t *testing.T) {
	for _, tc := range jsonScanCases {
		agree(t, "validJSON", validJSON, explainJSON, []byte(tc.in))
	}
	for _, tc := range msgpackScanCases {
		agree(t, "validMsgpack", validMsgpack, explainMsgpack, []byte(tc.in))
	}
}

// TestFastStringWords puts each kind of byte a string scan must stop at at
// every offset of the 8-byte words the fast scanner reads, and near the
// body's end, where it reads byte by byte.
func TestFastStringWords(t *testing.T) {
	specials := []string{`"`, `\n`, `\"`, `\\`, "\x1f", "\x00", "\x7f", "é", "😀", "\xff", "\xc3", `\u00e9`, `\ud83d\ude00`, `\ud800`, `\udc00`, `\x`, `\u12`, "\\"}
	for _, sp := range specials {
		for pre := range 18 {
			for post := range 10 {
				s := `"` + strings.Repeat("a", pre) + sp + strings.Repeat("b", post) + `"`
				for _, in := range []string{s, "[" + s + "]", `{` + s + `:1}`, s[:len(s)-1]} {
					agree(t, "validJSON", validJSON, explainJSON, []byte(in))
				}
			}
		}
	}
	// Every byte value once, in a word and in the tail.
	for c := range 256 {
		for _, in := range []string{`"abcdefgh` + string(rune(c)) + `abcdefgh"`, `"a` + string([]byte{byte(c)}) + `"`, `"abcdefghij` + string([]byte{byte(c)}) + `abcdefghij"`} {
			agree(t, "validJSON", validJSON, explainJSON, []byte(in))
		}
	}
}

// TestFastScannersDeep: nesting at and past the limit, longer than the
// exact scanners' 16-level buffers, in both formats.
func TestFastScannersDeep(t *testing.T) {
	for _, d := range []int{15, 16, 17, 63, 64, 65, 100} {
		for _, open := range []string{"[", `{"k":`} {
			closer := "]"
			if open != "[" {
				closer = "}"
			}
			agree(t, "validJSON", validJSON, explainJSON, []byte(strings.Repeat(open, d)+"1"+strings.Repeat(closer, d)))
			agree(t, "validJSON", validJSON, explainJSON, []byte(strings.Repeat(open, d)+"[]"+strings.Repeat(closer, d)))
		}
		agree(t, "validMsgpack", validMsgpack, explainMsgpack, append([]byte(strings.Repeat("\x91", d)), 0xc0))
		agree(t, "validMsgpack", validMsgpack, explainMsgpack, []byte(strings.Repeat("\x81\xa0", d)+"\x90"))
		agree(t, "validMsgpack", validMsgpack, explainMsgpack, []byte(strings.Repeat("\x92\x01", d)+"\x01"))
	}
}

// FuzzFastJSON: the fast JSON pass accepts exactly what the exact one
// does, under every limit.
func FuzzFastJSON(f *testing.F) {
	for _, tc := range jsonScanCases {
		f.Add([]byte(tc.in))
	}
	js, _ := benchBodies(f)
	for _, b := range js[:4] {
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		agree(t, "validJSON", validJSON, explainJSON, data)
	})
}

// FuzzFastMsgpack: likewise for msgpack.
func FuzzFastMsgpack(f *testing.F) {
	for _, tc := range msgpackScanCases {
		f.Add([]byte(tc.in))
	}
	for _, v := range []any{map[string]any{"name": "Ada", "n": []any{1, -1, 1.5, true, nil, []byte{1}, "é"}}, uint64(1 << 40), []any{[]any{map[string]any{}}}} {
		b, _ := msgpack.Marshal(v)
		f.Add(b)
	}
	_, mp := benchBodies(f)
	for _, b := range mp[:4] {
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		agree(t, "validMsgpack", validMsgpack, explainMsgpack, data)
	})
}

// TestFastMsgpackText: strings of every fixstr length and of str 8, with a
// byte that is not ASCII (valid UTF-8 or not) at each offset, in a body
// that ends right after them and in one with bytes after (the fast scanner
// reads eight at a time where it can).
func TestFastMsgpackText(t *testing.T) {
	for n := range 40 {
		for at := -1; at < n; at++ {
			for _, bad := range []string{"\xff", "é"} {
				s := []byte(strings.Repeat("a", n))
				if at >= 0 {
					s = []byte(string(s[:at]) + bad + string(s[at+1:]))
					s = s[:n] // "é" is two bytes: it may be cut, which is what the check must see
				}
				head := []byte{0xa0 | byte(n)}
				if n > 31 {
					head = []byte{0xd9, byte(n)}
				}
				body := append(head, s...)
				agree(t, "validMsgpack", validMsgpack, explainMsgpack, body)
				agree(t, "validMsgpack", validMsgpack, explainMsgpack, append([]byte{0x92}, append(body, 0xa8, 'p', 'a', 'd', 'd', 'i', 'n', 'g', 's')...))
			}
		}
	}
}
