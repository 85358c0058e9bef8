package pgoprof

import (
	"bytes"
	"compress/gzip"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"google.golang.org/protobuf/encoding/protowire"
)

func TestFuncName(t *testing.T) {
	const m = "github.com/wirebench/wirebench/"
	for _, tc := range []struct {
		in, pkg string
		parts   []string
		closure bool
	}{
		{m + "httpapi.(*Server).serveRoute", m + "httpapi", []string{"Server.serveRoute"}, false},
		{m + "httpapi.Handle", m + "httpapi", []string{"Handle"}, false},
		{m + "api.User.Valid", m + "api", []string{"User", "Valid"}, false},
		{m + "httpapi.Handle.func1.2", m + "httpapi", []string{"Handle"}, true},
		{m + "load.run.gowrap1", m + "load", []string{"run"}, true},
		{m + "server.Start.mountAirports.func7", m + "server", []string{"Start", "mountAirports"}, true},
		{m + "x.(*T).M.(*U).N.func2", m + "x", []string{"T.M", "U.N"}, true},
		{m + "x.(*T).M-fm", m + "x", []string{"T.M"}, false},
		{m + "x.F-range1", m + "x", []string{"F"}, true},
		{m + `store.(*table[go.shape.int64,go.shape.struct { ID int64 "json:\"id\"" }]).get`, m + "store", []string{"table.get"}, false},
		{m + "x.G[go.shape.string].func3", m + "x", []string{"G"}, true},
		{"main.(*loadFlags).run", "main", []string{"loadFlags.run"}, false},
		{"main.runLoad", "main", []string{"runLoad"}, false},
		{"gopkg.in/yaml%2ev3.(*parser).parse", "gopkg.in/yaml%2ev3", []string{"parser.parse"}, false},
		{m + "x.init", "", nil, false},
		{m + "x.init.0", "", nil, false},
		{m + "x.glob..func1", "", nil, false},
		{m + "x.a.b.c", "", nil, false},
		{"runtime", "", nil, false},
	} {
		pkg, parts, closure, ok := FuncName(tc.in)
		if ok != (tc.parts != nil) || pkg != tc.pkg || !slices.Equal(parts, tc.parts) || closure != tc.closure {
			t.Errorf("FuncName(%q) = %q, %q, %v, %v; want %q, %q, %v", tc.in, pkg, parts, closure, ok, tc.pkg, tc.parts, tc.closure)
		}
	}
}

// FuzzParse: any bytes give a profile or an error, never a panic or a
// hang. The seeds: the head of our real profile, unzipped (the gunzip is
// the standard library's; fuzzing through it spends the time inflating),
// and a whole small one.
func FuzzParse(f *testing.F) {
	if data, err := os.ReadFile("../../cmd/wirebench/default.pgo"); err == nil {
		if zr, err := gzip.NewReader(bytes.NewReader(data)); err == nil {
			if raw, err := io.ReadAll(zr); err == nil {
				f.Add(raw[:min(len(raw), 2048)])
			}
		}
	}
	f.Add(smallProfile())
	f.Fuzz(func(t *testing.T, data []byte) {
		p, err := Parse(data)
		if err != nil {
			return
		}
		for name, w := range p.Weights {
			if w < 0 || w > p.Total {
				t.Fatalf("%s: weight %d of a total %d", name, w, p.Total)
			}
			FuncName(name)
		}
	})
}

// smallProfile is a profile.proto of two samples: 3 on F → G, 2 on G.
func smallProfile() []byte {
	msg := func(fields ...[]byte) []byte { return bytes.Join(fields, nil) }
	varint := func(n protowire.Number, x uint64) []byte {
		return protowire.AppendVarint(protowire.AppendTag(nil, n, protowire.VarintType), x)
	}
	bytesField := func(n protowire.Number, b []byte) []byte {
		return protowire.AppendBytes(protowire.AppendTag(nil, n, protowire.BytesType), b)
	}
	packed := func(xs ...uint64) []byte {
		var b []byte
		for _, x := range xs {
			b = protowire.AppendVarint(b, x)
		}
		return b
	}
	return msg(
		bytesField(1, msg(varint(1, 1), varint(2, 2))), // samples/count
		bytesField(2, msg(bytesField(1, packed(2, 1)), bytesField(2, packed(3)))),
		bytesField(2, msg(varint(1, 2), varint(2, 2))), // unpacked
		bytesField(4, msg(varint(1, 1), bytesField(4, msg(varint(1, 1))))),
		bytesField(4, msg(varint(1, 2), bytesField(4, msg(varint(1, 2))))),
		bytesField(5, msg(varint(1, 1), varint(2, 3), varint(4, 5))),
		bytesField(5, msg(varint(1, 2), varint(2, 4), varint(4, 5))),
		bytesField(6, nil),
		bytesField(6, []byte("samples")),
		bytesField(6, []byte("count")),
		bytesField(6, []byte("example.com/m/x.F")),
		bytesField(6, []byte("example.com/m/x.(*T).G")),
		bytesField(6, []byte("/src/x/x.go")),
	)
}

// TestParse: the small profile's weights, each sample counted
// once per function on its stack.
func TestParse(t *testing.T) {
	p, err := parse(smallProfile())
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]int64{"example.com/m/x.F": 3, "example.com/m/x.(*T).G": 5}
	if p.Total != 5 || len(p.Weights) != 2 || p.Weights["example.com/m/x.F"] != 3 || p.Weights["example.com/m/x.(*T).G"] != 5 {
		t.Errorf("total %d, weights %v; want 5, %v", p.Total, p.Weights, want)
	}
	for _, bad := range [][]byte{{0x12, 0x02, 0x08}, {0x12, 0x02, 0x08, 0x09}, {0xff}} {
		if _, err := parse(bad); err == nil {
			t.Errorf("parse(%x): no error", bad)
		}
	}
}

// TestStale: a function the profile names with weight enough is stale once
// the source no longer declares it — a rename, a method moved to another
// type, a closure's enclosing function renamed, a package gone — and not
// while it does, whatever its shape (value or pointer receiver, generic,
// closure, inlined maker of a closure, main's). Functions under minShare
// and other modules' are not looked at.
func TestStale(t *testing.T) {
	const mod = "example.com/m"
	src := map[string]string{
		"x/x.go": `package x
type T struct{}
type L[K any] struct{}
func F() {}
func (T) V() {}
func (*T) P() {}
func (*L[K]) G() {}
func maker() {}
`,
		"x/other_test.go": "package x\nfunc Gone() {}\n",
		"cmd/app/main.go": "package main\nfunc run() {}\n",
	}
	root := t.TempDir()
	for name, text := range src {
		path := filepath.Join(root, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	p := &Profile{Total: 1000, Weights: map[string]int64{}, Files: map[string]string{}}
	add := func(name string, w int64) {
		p.Weights[name] = w
		p.Files[name] = "/elsewhere/x/x.go"
	}
	// (*T).V: the compiler's wrapper of a value method, under its name.
	fresh := []string{mod + "/x.F", mod + "/x.T.V", mod + "/x.(*T).V", mod + "/x.(*T).P", mod + "/x.(*L[go.shape.int]).G",
		mod + "/x.F.func2", mod + "/x.F.maker.func1", "main.run", "main.run.gowrap1", mod + "/x.init.0"}
	stale := []string{mod + "/x.Gone", mod + "/x.T.Q", mod + "/x.Renamed.func1",
		mod + "/x.F.renamed.func1", mod + "/y.F", "main.gone"}
	for _, name := range fresh {
		add(name, 10)
	}
	for _, name := range stale {
		add(name, 10)
	}
	add(mod+"/x.Light", 1)         // under minShare
	add("example.com/other.F", 10) // not ours
	got, checked, err := Stale(p, Module{Root: root, Path: mod, Main: "cmd/app"}, 0.005)
	if err != nil {
		t.Fatal(err)
	}
	if want := len(fresh) - 1 + len(stale); checked != want { // x.init.0: nothing to check
		t.Errorf("checked %d functions, want %d", checked, want)
	}
	var names []string
	for _, g := range got {
		names = append(names, strings.Fields(g)[0])
	}
	slices.Sort(stale)
	if !slices.Equal(names, stale) {
		t.Errorf("stale:\n  %s\nwant:\n  %s", strings.Join(got, "\n  "), strings.Join(stale, "\n  "))
	}
	// A closure made by another module's inlined function: only its
	// enclosing function is ours to check (the file is not in our tree).
	p = &Profile{Total: 1, Weights: map[string]int64{mod + "/x.F.(*Header).All.func1": 1}, Files: map[string]string{mod + "/x.F.(*Header).All.func1": "/mod/cache/lib@v1/header.go"}}
	if got, _, err := Stale(p, Module{Root: root, Path: mod, Main: "cmd/app"}, 0); err != nil || len(got) > 0 {
		t.Errorf("a closure of another module's function inlined into F: %q, %v; want none", got, err)
	}
	p.Files[mod+"/x.F.(*Header).All.func1"] = "/build/x/x.go"
	if got, _, _ := Stale(p, Module{Root: root, Path: mod, Main: "cmd/app"}, 0); len(got) != 1 {
		t.Errorf("the same closure in our tree, no Header.All declared: %q; want it stale", got)
	}
}
