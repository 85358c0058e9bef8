package payload

import (
	"bytes"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// treeShape counts samples the reference way: each parsed into its tree
// and walked. nodes is what add returned, per sample.
func treeShape(t testing.TB, samples [][]byte, maxDepth int) (*shapeAcc, []int) {
	t.Helper()
	a := newShapeAcc()
	var nodes []int
	for _, s := range samples {
		v, err := parseValue(s, maxDepth)
		if err != nil {
			t.Fatalf("%q: %v", s, err)
		}
		nodes = append(nodes, a.add(v, len(s)))
	}
	return a, nodes
}

// sameShape checks that the scan counts samples exactly as the tree walk.
func sameShape(t testing.TB, samples [][]byte, maxDepth int) {
	t.Helper()
	want, wantNodes := treeShape(t, samples, maxDepth)
	got := newShapeAcc()
	for i, s := range samples {
		n, err := got.scan(s, maxDepth)
		if err != nil {
			t.Fatalf("scan %q: %v", s, err)
		}
		if n != wantNodes[i] {
			t.Errorf("%q: scan counts %d values, the tree %d", s, n, wantNodes[i])
		}
	}
	if g, w := got.result(), want.result(); !reflect.DeepEqual(g, w) {
		t.Errorf("shape of %d samples:\nscan %+v\ntree %+v", len(samples), *g, *w)
	}
	if !reflect.DeepEqual(got.depths, want.depths) {
		t.Errorf("depths: scan %v, tree %v", got.depths, want.depths)
	}
}

func lines(s string) [][]byte {
	var out [][]byte
	for _, l := range strings.Split(strings.TrimSpace(s), "\n") {
		out = append(out, []byte(l))
	}
	return out
}

// The scan's statistics are the tree's, on every shape that moves them.
func TestShapeScanMatchesTree(t *testing.T) {
	deep := strings.Repeat(`{"a":[`, 30) + `{"x":1}` + strings.Repeat(`]}`, 30)
	cases := map[string]string{
		"uniform table":  `[{"id":1,"n":"a"},{"id":2,"n":"b"},{"id":3,"n":"c"}]`,
		"table in table": `{"rows":[{"id":1,"tags":[{"k":"a","v":1},{"k":"b","v":2}]},{"id":2,"tags":[{"k":"c","v":3},{"k":"d","v":4}]}]}`,
		"not uniform": `[{"a":1,"b":2},{"b":2,"a":1}]
[{"a":1},{"a":1,"b":2}]
[{"a":1,"b":2},{"a":1}]
[{"a":{}},{"a":1}]
[{"a":1},{"a":[]}]
[{},{}]
[{},{"a":1}]
[{"a":1},{}]
[1,{"a":1},{"a":1}]
[{"a":1},{"a":1},2]
[{"a":1}]
[[{"a":1},{"a":1}],[{"b":1},{"b":1}]]`,
		"first object holds a table": `[{"t":[{"x":1},{"x":2}],"y":1},{"t":[{"x":1},{"x":2}],"y":1}]
[{"y":1,"z":[{"q":1},{"q":2}]},{"y":1,"z":2}]
[{"p":1,"q":2},{"p":1,"q":2,"r":[{"a":1},{"a":2}]}]`,
		"deep documents": deep + "\n" + `{"a":{"b":{"c":{"d":{"e":[1,[2,[3,[4]]]]}}}}}` + "\n" + `[[[[[]]]]]`,
		"mixed arrays":   `[1,"two",3.5,null,true,false,{"a":1},[2],"2026-11-29T15:35:25Z",-0,1e400]`,
		"unicode escapes": `{"caf\u00e9":"\u00e9t\u00e9","cafe\u0301":"\ud83d\ude00","\ud800":"lone \udc00","k\"q":"a\\b\/c\n\t\r\b\f"}
[{"caf\u00e9":1,"x":"y"},{"café":2,"x":"z"}]
[{"a\u0062":1},{"ab":2},{"a\\b":3}]`,
		"big numbers": `{"i":9007199254740993,"j":-9007199254740993,"k":9007199254740992,"l":12345678901234567890,"f":1.5e300,"g":-0.000001,"h":123456789012345678901234567890.5}`,
		"strings":     `{"bin":"SGVsbG8sIHdvcmxkISBIZWxsbw==","url":"SGVsbG8_d29ybGQtSGVsbG8","notbin":"abcdefghijklmnopqrstuvwxyz","ts":"2026-11-29T15:35:25.123456789+01:00","nots":"2026-13-29T15:35:25Z","esc":"2026-11-29T15:35:25\u005a"}`,
		"scalars":     "1\n\"x\"\nnull\ntrue\nfalse\n-12.5e-3\n{}\n[]",
		"duplicates":  `{"a":1,"a":2,"b":{"a":3}}`,
		"names by position": `{"":1,"a":{"":2}}
{"":1,"a":{"b":2}}
{"a0123456789012345678901234567890123":1,"a0123456789012345678901234567890123":2}
{"x":1}
{"y":1}`,
		"whitespace": " \t{ \"a\" : [ 1 , { \"b\" : null } ] ,\r\t \"c\":\"d\" } \r",
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			sameShape(t, lines(c), DefaultMaxDepth)
		})
	}
	t.Run("testdata", func(t *testing.T) {
		n := 0
		for _, path := range []string{"testdata/orders.jsonl", "testdata/search-v3.jsonl", "../examples/data/shipments.json",
			"../docs/figures/2026-11-29/payload/deep.json"} {
			f, err := os.Open(path)
			if err != nil {
				t.Fatal(err)
			}
			sp := newSplitter(f, DefaultMaxSample)
			var samples [][]byte
			for {
				raw, _, _, err := sp.next()
				if err != nil {
					break
				}
				samples = append(samples, bytes.Clone(raw))
			}
			f.Close()
			n += len(samples)
			sameShape(t, samples, DefaultMaxDepth)
		}
		if n < 60 {
			t.Fatalf("%d samples in the test files, want 60 or more", n)
		}
	})
	t.Run("generated", func(t *testing.T) {
		sameShape(t, lines(string(shipmentLines(500, 3))), DefaultMaxDepth)
	})
}

// The scan refuses what the parser refuses, with the parser's error; its
// counts of a refused sample do not matter (the run stops).
func TestShapeScanRefusesAsTheParser(t *testing.T) {
	for _, in := range []string{`{"a":1`, `[1,]`, `{"a" 1}`, `"\x"`, "\"\xff\"", `01`, `1.`, `-`, `tru`, `{} x`, `[` + strings.Repeat("[", 64) + strings.Repeat("]", 65)} {
		_, perr := parseValue([]byte(in), DefaultMaxDepth)
		_, err := newShapeAcc().scan([]byte(in), DefaultMaxDepth)
		if perr == nil || err == nil || err.Error() != perr.Error() {
			t.Errorf("%q: scan %v, parser %v", in, err, perr)
		}
	}
}

// Reading counts every sample's shape without a tree per sample: only the
// samples kept are parsed. A tree per sample read cost ~40 allocations a
// shipment (twice the libraries' own decode of the file).
func TestReadingParsesOnlyTheKeptSamples(t *testing.T) {
	path := filepath.Join(t.TempDir(), "ship.jsonl")
	const n = 2000
	if err := os.WriteFile(path, shipmentLines(n, 2), 0o644); err != nil {
		t.Fatal(err)
	}
	o := Options{Samples: 10}
	o.fill()
	var kept int
	allocs := testing.AllocsPerRun(3, func() {
		res := &reservoir{n: o.Samples, maxCost: o.MaxKept, rng: rand.New(rand.NewPCG(1, 2))}
		st, err := readInputs([]string{path}, &o, res, newShapeAcc())
		if err != nil || st.Read != n {
			t.Fatalf("read %d samples, %v; want %d", st.Read, err, n)
		}
		kept = len(res.kept)
	})
	if kept != 10 {
		t.Fatalf("kept %d samples, want 10", kept)
	}
	t.Logf("%.3f allocations a sample", allocs/n)
	if per := allocs / n; per > 2 {
		t.Errorf("%.1f allocations a sample read, want at most 2 (no tree per sample)", per)
	}
}

// FuzzShapeScan checks the scan against the parser and the tree walk: it
// accepts exactly what parseValue accepts, with the same error, and
// counts what walk counts.
func FuzzShapeScan(f *testing.F) {
	for _, s := range []string{`{"a":[1,2.5e3,"x\n",true,null]}`, `[{"a":1,"b":"x"},{"a":2,"b":"y"}]`, `[{"a":1},{"a":[]}]`,
		`"\ud83d\ude00"`, `{"caf\u00e9":1}`, `9007199254740993`, `"SGVsbG8sIHdvcmxkISBIZWxsbw=="`, `"2026-11-29T15:35:25Z"`,
		`[[{"x":1},{"x":2}],{"y":[{"a":1},{"a":2}]}]`, `[1,]`, "\"\xff\""} {
		f.Add([]byte(s), uint8(8))
	}
	f.Fuzz(func(t *testing.T, data []byte, depth uint8) {
		maxDepth := int(depth%16) + 1
		v, perr := parseValue(data, maxDepth)
		got := newShapeAcc()
		n, err := got.scan(data, maxDepth)
		if (err == nil) != (perr == nil) || err != nil && err.Error() != perr.Error() {
			t.Fatalf("%q: scan %v, parser %v", data, err, perr)
		}
		if err != nil {
			return
		}
		want := newShapeAcc()
		if wn := want.add(v, len(data)); wn != n {
			t.Fatalf("%q: scan counts %d values, the tree %d", data, n, wn)
		}
		if g, w := got.result(), want.result(); !reflect.DeepEqual(g, w) {
			t.Fatalf("%q:\nscan %+v\ntree %+v", data, *g, *w)
		}
	})
}
