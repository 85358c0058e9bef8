package flow

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"os"
	"strings"
	"testing"
)

func noFile(string) ([]byte, error) { return nil, os.ErrNotExist }

// Every problem in a flow file is one line naming the file and line.
func TestParseErrors(t *testing.T) {
	t.Parallel()
	cases := []struct{ name, text, want string }{
		{"unknown key", "flow:\n  - get:\n      url: /a\n      expect: []\n", `f.yaml:4: unknown key "expect" in step 1 (get); checks are check:`},
		{"typo", "flow:\n  - get:\n      ulr: /a\n", `f.yaml:3: unknown key "ulr" in step 1 (get); did you mean "url"?`},
		{"step kind", "flow:\n  - fetch:\n      url: /a\n", `f.yaml:2: step 1: unknown step "fetch"`},
		{"bad template", "flow:\n  - get:\n      url: /a/{{.N\n", `f.yaml:3: step 1: url: bad template:`},
		{"unknown variable", "flow:\n  - get:\n      url: /a/{{.id}}\n", `f.yaml:3: step 1: url: {{.id}} is not a variable here`},
		{"capture used too early", "flow:\n  - get:\n      url: /a/{{.id}}\n      capture:\n        - json: $.id\n          as: id\n", `f.yaml:3: step 1: url: {{.id}} is not a variable here`},
		{"bad path", "flow:\n  - get:\n      url: /a\n      capture:\n        - json: $.a[-1]\n          as: x\n", `f.yaml:5: step 1: capture 1: bad JSON path "$.a[-1]"`},
		{"no as", "flow:\n  - get:\n      url: /a\n      capture:\n        - json: $.a\n", `f.yaml:5: step 1: capture 1: no as:`},
		{"full url", "flow:\n  - get:\n      url: http://x/a\n", `f.yaml:3: step 1: url "http://x/a": want a path`},
		{"think first", "flow:\n  - think: 1s\n  - get:\n      url: /a\n", `f.yaml:2: step 1: think before the first request`},
		{"bad think", "flow:\n  - get:\n      url: /a\n  - think: soon\n", `f.yaml:4: step 2: think: want a pause`},
		{"bad status", "flow:\n  - get:\n      url: /a\n      check:\n        - status: ok\n", `f.yaml:5: step 1: check 1: status: want a status 100..999`},
		{"two tests", "flow:\n  - get:\n      url: /a\n      check:\n        - json: $.a\n          equals: x\n          exists: true\n", `f.yaml:5: step 1: check 1: give one of equals, contains and exists`},
		{"not yaml", "flow: [\n", `f.yaml:1: not YAML:`},
		{"empty", "", `f.yaml:1: the file is empty`},
		{"no flow", "name: x\n", `f.yaml:1: no flow:`},
		{"body file", "flow:\n  - post:\n      url: /a\n      body_file: b.json\n", `f.yaml:4: step 1: body_file:`},
		{"content-length", "flow:\n  - get:\n      url: /a\n      headers: {Content-Length: '3'}\n", `f.yaml:4: step 1: headers: Content-Length is the client's to set`},
		{"same name", "flow:\n  - get:\n      name: a\n      url: /a\n  - get:\n      name: a\n      url: /b\n", `f.yaml:5: step name "a" is also step 1's`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			_, err := Parse("f.yaml", []byte(tc.text), "", noFile)
			if err == nil || !errors.Is(err, ErrFlow) || !strings.Contains(err.Error(), tc.want) || strings.Contains(err.Error(), "\n") {
				t.Fatalf("error %v, want one line with %q", err, tc.want)
			}
		})
	}
}

func TestParseNames(t *testing.T) {
	t.Parallel()
	f, err := Parse("f.yaml", []byte("flow:\n  - get:\n      url: /a\n  - get:\n      url: /a\n  - think: 0.5\n  - think: 1s\n"), "", noFile)
	if err != nil {
		t.Fatal(err)
	}
	if f.Steps[0].Name != "GET /a" || f.Steps[1].Name != "GET /a #2" || f.Steps[1].Think.Seconds() != 1.5 {
		t.Fatalf("steps %+v", f.Steps)
	}
	if c := f.Steps[0].Check; len(c) != 1 || c[0].Status != nil || !c[0].isStatus() {
		t.Fatalf("default check %+v, want status 2xx", c)
	}
}

func TestPathFind(t *testing.T) {
	t.Parallel()
	doc := []byte(` {"a": {"b": [ {"c": "x\"y"}, {"c": 2.5e3} ], "d.e": true}, "n": null, "u": "\u00e9\ud83d\ude00"} `)
	cases := []struct{ path, want string }{
		{"$.a.b[0].c", `x"y`},
		{"$.a.b[1].c", "2.5e3"},
		{"$.a['d.e']", "true"},
		{`$.a["d.e"]`, "true"},
		{"$.n", "null"},
		{"$.u", "é😀"},
		{"$.a.b[1]", `{"c": 2.5e3}`},
	}
	for _, tc := range cases {
		p, err := ParsePath(tc.path)
		if err != nil {
			t.Fatal(err)
		}
		raw, ok := p.Find(doc)
		if !ok || Text(raw) != tc.want {
			t.Errorf("%s: %q %v, want %q", tc.path, raw, ok, tc.want)
		}
	}
	for _, miss := range []string{"$.a.b[2]", "$.x", "$.a.b.c", "$.n.x", "$[0]"} {
		p, _ := ParsePath(miss)
		if raw, ok := p.Find(doc); ok {
			t.Errorf("%s found %q", miss, raw)
		}
	}
	for _, bad := range []string{"a", "$..a", "$.a[", "$.a[x]", "$.*", "$.a[-1]", "$a", "$.a['b"} {
		if _, err := ParsePath(bad); err == nil {
			t.Errorf("%q parsed", bad)
		}
	}
}

func FuzzParsePath(f *testing.F) {
	for _, s := range []string{"$", "$.a.b[0].c", "$['x y'][3]", `$["a"]`, "$.", "$[", "$.a[01]"} {
		f.Add(s, []byte(`{"a": {"b": [{"c": 1}]}, "x y": [0,1,2,3]}`))
	}
	f.Fuzz(func(t *testing.T, path string, doc []byte) {
		p, err := ParsePath(path)
		if err != nil {
			return
		}
		if raw, ok := p.Find(doc); ok {
			if len(raw) == 0 {
				t.Fatalf("%s found an empty value in %q", path, doc)
			}
			_ = Text(raw)
		}
		if q, err := ParsePath(p.String()); err != nil || len(q.segs) != len(p.segs) {
			t.Fatalf("%q does not parse back: %v", p.String(), err)
		}
	})
}

func FuzzParseFlow(f *testing.F) {
	f.Add([]byte(lifecycle))
	f.Add([]byte("flow:\n  - get:\n      url: /a/{{.N}}\n  - think: 1\n"))
	f.Add([]byte("headers: {A: '{{.VU}}'}\nflow: [{post: {url: /x, body: '{{printf \"%d\" 1}}', check: [{status: [200, 201]}, {header: X, contains: a}]}}]\n"))
	f.Fuzz(func(t *testing.T, text []byte) {
		fl, err := Parse("f.yaml", text, "", noFile)
		if err != nil {
			if !errors.Is(err, ErrFlow) || strings.Contains(err.Error(), "\n") || !strings.Contains(err.Error(), "f.yaml:") {
				t.Fatalf("error %q: want one line naming the file", err)
			}
			return
		}
		if len(fl.Steps) == 0 {
			t.Fatal("a flow without steps parsed")
		}
	})
}

func FuzzReadData(f *testing.F) {
	f.Add([]byte("name,id\nada,1\nbob,2\n"), false)
	f.Add([]byte("{\"name\": \"ada\", \"id\": 1}\n{\"id\": 2, \"name\": \"bob\"}\n"), true)
	f.Add([]byte("\ufeffa\n\"x,y\"\n"), false)
	f.Fuzz(func(t *testing.T, text []byte, jsonl bool) {
		read := readCSV
		if jsonl {
			read = func(file string, r io.Reader) (*Data, error) { return readJSONLines(file, bufio.NewReader(r)) }
		}
		d, err := read("d", bytes.NewReader(text))
		if err != nil {
			if !errors.Is(err, ErrFlow) || strings.Contains(err.Error(), "\n") {
				t.Fatalf("error %q: want one line", err)
			}
			return
		}
		for i, row := range d.Rows {
			if len(row) != len(d.Columns) {
				t.Fatalf("row %d has %d values for %d columns", i, len(row), len(d.Columns))
			}
		}
		for _, c := range d.Columns {
			if !isIdent(c) {
				t.Fatalf("column %q is no template name", c)
			}
		}
	})
}
