package toon

import (
	"bufio"
	"bytes"
	"encoding/json"
	"math"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/wirebench/wirebench/internal/testkit"
)

// The differential test checks us against the reference implementation
// @toon-format/toon (pinned in testdata/reference/package-lock.json):
// random documents must encode byte for byte alike, and each side must
// decode the other's output to the original value.

const referenceDir = "testdata/reference"

func referenceNode(t *testing.T) string {
	t.Helper()
	msg := "reference implementation not installed: run npm ci in toon/testdata/reference"
	node, err := exec.LookPath("node")
	if err == nil {
		_, err = os.Stat(filepath.Join(referenceDir, "node_modules", "@toon-format", "toon", "package.json"))
	}
	if err != nil {
		if testkit.InCI() {
			t.Fatalf("%s (%v)", msg, err)
		}
		t.Skip(msg)
	}
	return node
}

// docGen makes random documents that exercise quoting, every array form
// and numbers at the edges of the canonical range. It avoids keys that
// JavaScript would reorder (canonical array indices such as "1").
type docGen struct{ r *rand.Rand }

var awkwardStrings = []string{
	"", " ", "  lead", "trail ", " both ", "quo\"te", `back\slash`, "a:b", "-", "-x", "- item",
	"#", "#tag", "a#b", "ctrl\x01\x1f", "tab\there", "nl\nline", "cr\r", "ünïcödé", "日本語", "emoji 🎉",
	"1e5", "-0", "05", "0", "1.5", "+1", "-1E+03", "true", "false", "null", "True", "NULL", "a,b", "a|b",
	"a\tb", "[x]", "{y}", "[]", "\uFEFFbom", "NaN", "Infinity", "0x10", "1_000", ".5", "1.", "x y z",
	"http://a:b", "key: value", `"quoted"`, "\u00a0nbsp", "é", "\u2028",
}

var awkwardKeys = []string{
	"id", "name", "a.b", "my-key", "x y", "", "2key", "_x", "ünï", "quo\"te", "colon:key", "#hash",
	"-dash", "[br]", "{b}", "tab\tkey", "nl\nkey", "__proto__", "constructor", "05", "-1", "a,b", "a|b",
	"1.5", "true", "null", "Z9", "camelCase", "snake_case", "dot.ted.key",
}

var edgeNumbers = []float64{
	0, math.Copysign(0, -1), 1, -1, 42, 1e6, 1e15, 1e20, 1e21, 1e22, 1.5e300, math.MaxFloat64,
	1 << 53, 1<<53 + 2, -(1 << 60), 1e-6, 1e-7, 1.5e-10, 5e-324, 0.1, 0.3333333333333333,
	123456.789, -0.000001, 2.5e-5,
}

func (g *docGen) number() any {
	var f float64
	switch g.r.IntN(4) {
	case 0:
		f = edgeNumbers[g.r.IntN(len(edgeNumbers))]
	case 1:
		f = float64(g.r.IntN(2000) - 1000)
	case 2:
		f = (g.r.Float64() - 0.5) * math.Pow(10, float64(g.r.IntN(40)-20))
	default:
		f = float64(g.r.Int64N(1<<53)) * math.Pow(10, float64(g.r.IntN(8)))
	}
	return Number(appendFloat(nil, f, 64))
}

func (g *docGen) str() string {
	if g.r.IntN(3) == 0 {
		const letters = "abcdefghijklmnopqrstuvwxyzABC 0123456789-_.:,|#\"\\é中"
		rs := []rune(letters)
		n := g.r.IntN(8)
		var b strings.Builder
		for range n {
			b.WriteRune(rs[g.r.IntN(len(rs))])
		}
		return b.String()
	}
	return awkwardStrings[g.r.IntN(len(awkwardStrings))]
}

func (g *docGen) key() string { return awkwardKeys[g.r.IntN(len(awkwardKeys))] }

func (g *docGen) primitive() any {
	switch g.r.IntN(6) {
	case 0:
		return nil
	case 1:
		return g.r.IntN(2) == 0
	case 2, 3:
		return g.number()
	}
	return g.str()
}

// keys returns n distinct keys.
func (g *docGen) keys(n int) []string {
	var ks []string
	seen := map[string]bool{}
	for len(ks) < n {
		k := g.key()
		if !seen[k] {
			seen[k] = true
			ks = append(ks, k)
		}
	}
	return ks
}

// shape is a field layout shared by uniform objects (tables, keyed tables).
type shape struct {
	keys []string
	sub  []*shape // nil: primitive column
}

func (g *docGen) shape(depth int) *shape {
	s := &shape{keys: g.keys(1 + g.r.IntN(4))}
	s.sub = make([]*shape, len(s.keys))
	for i := range s.keys {
		if depth < 2 && g.r.IntN(5) == 0 {
			s.sub[i] = g.shape(depth + 1) // nested field group
		}
	}
	return s
}

func (g *docGen) fill(s *shape) Object {
	o := make(Object, len(s.keys))
	for i, k := range s.keys {
		if s.sub[i] != nil {
			o[i] = Member{k, g.fill(s.sub[i])}
		} else {
			o[i] = Member{k, g.primitive()}
		}
	}
	return o
}

func (g *docGen) object(depth int) Object {
	if depth < 4 && g.r.IntN(6) == 0 { // keyed-table candidate
		s := g.shape(0)
		o := Object{}
		for _, k := range g.keys(2 + g.r.IntN(3)) {
			o = append(o, Member{k, g.fill(s)})
		}
		return o
	}
	ks := g.keys(g.r.IntN(5))
	o := make(Object, len(ks))
	for i, k := range ks {
		o[i] = Member{k, g.value(depth + 1)}
	}
	return o
}

func (g *docGen) array(depth int) []any {
	n := g.r.IntN(5)
	a := make([]any, n)
	switch g.r.IntN(5) {
	case 0: // primitives: inline
		for i := range a {
			a[i] = g.primitive()
		}
	case 1: // uniform objects: tabular
		s := g.shape(0)
		for i := range a {
			a[i] = g.fill(s)
		}
	case 2: // arrays of primitives
		for i := range a {
			inner := make([]any, g.r.IntN(4))
			for j := range inner {
				inner[j] = g.primitive()
			}
			a[i] = inner
		}
	default: // mixed: list items
		for i := range a {
			a[i] = g.value(depth + 1)
		}
	}
	return a
}

func (g *docGen) value(depth int) any {
	if depth >= 5 {
		return g.primitive()
	}
	switch g.r.IntN(4) {
	case 0:
		return g.primitive()
	case 1:
		return g.array(depth)
	}
	return g.object(depth)
}

func (g *docGen) doc() any {
	switch g.r.IntN(10) {
	case 0:
		return g.primitive()
	case 1, 2:
		return g.array(0)
	}
	return g.object(0)
}

type refRequest struct {
	Value   json.RawMessage `json:"value"`
	TOON    string          `json:"toon"`
	Options refOptions      `json:"options"`
}

type refOptions struct {
	Delimiter  string `json:"delimiter"`
	IndentSize int    `json:"indentSize"`
}

type refReply struct {
	Encoded     *string         `json:"encoded"`
	EncodeError string          `json:"encodeError"`
	Decoded     json.RawMessage `json:"decoded"`
	DecodeError string          `json:"decodeError"`
}

func TestReferenceDifferential(t *testing.T) {
	node := referenceNode(t)
	const docs = 3000
	g := docGen{rand.New(rand.NewPCG(2024, 3))}
	type item struct {
		doc  any
		opts MarshalOptions
		ours string
	}
	items := make([]item, docs)
	var in bytes.Buffer
	for i := range items {
		it := item{doc: g.doc()}
		it.opts.Delimiter = []Delimiter{Comma, Tab, Pipe}[g.r.IntN(3)]
		it.opts.Indent = []int{2, 2, 4}[g.r.IntN(3)]
		out, err := it.opts.Marshal(it.doc)
		if err != nil {
			t.Fatalf("doc %d: Marshal: %v", i, err)
		}
		it.ours = string(out)
		items[i] = it
		js, err := ToJSON(it.doc)
		if err != nil {
			t.Fatal(err)
		}
		req, err := json.Marshal(refRequest{js, it.ours, refOptions{string(rune(it.opts.Delimiter)), it.opts.Indent}})
		if err != nil {
			t.Fatal(err)
		}
		in.Write(req)
		in.WriteByte('\n')
	}
	cmd := exec.Command(node, "diff.mjs")
	cmd.Dir = referenceDir
	cmd.Stdin = &in
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	stdout, err := cmd.Output()
	if err != nil {
		t.Fatalf("node diff.mjs: %v\n%s", err, stderr.String())
	}
	sc := bufio.NewScanner(bytes.NewReader(stdout))
	sc.Buffer(nil, 64<<20)
	compared, replies := 0, 0
	for i := 0; sc.Scan(); i++ {
		replies++
		if i >= len(items) {
			t.Fatalf("more replies than requests")
		}
		it := items[i]
		var rep refReply
		if err := json.Unmarshal(sc.Bytes(), &rep); err != nil {
			t.Fatalf("reply %d: %v", i, err)
		}
		js, _ := ToJSON(it.doc)
		if rep.Encoded == nil {
			t.Errorf("doc %d %s: reference cannot encode: %s", i, js, rep.EncodeError)
			continue
		}
		if *rep.Encoded != it.ours {
			t.Errorf("doc %d %s (%v, indent %d): encodings differ\nours:\n%s\ntheirs:\n%s", i, js, it.opts.Delimiter, it.opts.Indent, it.ours, *rep.Encoded)
			continue
		}
		var back any
		if err := (UnmarshalOptions{Indent: it.opts.Indent}).Unmarshal([]byte(*rep.Encoded), &back); err != nil {
			t.Errorf("doc %d: we cannot decode the reference's output: %v\n%s", i, err, *rep.Encoded)
			continue
		}
		if !equalValues(back, it.doc) {
			bj, _ := ToJSON(back)
			t.Errorf("doc %d: our decode of the reference's output differs\ngot:  %s\nwant: %s", i, bj, js)
		}
		if rep.DecodeError != "" {
			t.Errorf("doc %d: reference cannot decode our output: %s\n%s", i, rep.DecodeError, it.ours)
			continue
		}
		theirs, err := FromJSON(rep.Decoded)
		if err != nil {
			t.Fatal(err)
		}
		if !equalValues(theirs, it.doc) {
			t.Errorf("doc %d: reference decode of our output differs\ngot:  %s\nwant: %s", i, rep.Decoded, js)
		}
		compared++
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	t.Logf("compared %d of %d random documents with @toon-format/toon", compared, docs)
	// One reply per request: a reference that stops early (a crash after
	// some output, a dropped line) must not pass for the documents it
	// never saw.
	if replies != docs {
		t.Fatalf("%d replies to %d requests", replies, docs)
	}
	if compared == 0 {
		t.Fatal("no document was compared")
	}
}
