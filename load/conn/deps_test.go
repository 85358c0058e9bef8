package conn

import (
	"go/ast"
	"go/build"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

const module = "github.com/wirebench/wirebench/"

// connSetUp names what is connection set-up, were load to declare it
// again: TLS and ALPN, pools, Alt-Svc, transport and client names.
var connSetUp = regexp.MustCompile(`TLS|ALPN|AltSvc|H2Only|Pool|Dial|^Transport|^Client(Lean|Std)$|^HostPort$`)

// TestConnectionLayerImports walks the module's packages under load (not
// their tests) and fails when the connection layer is bypassed: conn
// importing the engine or a client (a package that imports load), load
// importing a client, or a client naming load's identifiers for
// connection set-up (every client connects through conn). It reads the
// source files (go/build, go/parser): cheap, no network.
func TestConnectionLayerImports(t *testing.T) {
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	pkgs := map[string]*build.Package{} // import path -> package, under load/
	err = filepath.WalkDir(filepath.Join(root, "load"), func(dir string, d fs.DirEntry, err error) error {
		if err != nil || !d.IsDir() {
			return err
		}
		if strings.Contains(dir, "testdata") {
			return filepath.SkipDir
		}
		p, err := build.ImportDir(dir, 0)
		if err != nil {
			return nil // no Go files
		}
		rel, _ := filepath.Rel(root, dir)
		pkgs[module+filepath.ToSlash(rel)] = p
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	engine, self := module+"load", module+"load/conn"
	clients := map[string]bool{}
	for path, p := range pkgs {
		for _, imp := range p.Imports {
			if imp == engine {
				clients[path] = true
			}
		}
	}
	for _, c := range []string{"scenario", "stream", "replay", "browser"} {
		if !clients[engine+"/"+c] {
			t.Fatalf("load/%s does not import load: the walk is wrong (clients %v)", c, clients)
		}
	}
	// deps is every package of the module under load that path imports, directly or not.
	deps := func(path string) map[string]string {
		seen := map[string]string{}
		var walk func(path, from string)
		walk = func(path, from string) {
			if _, ok := seen[path]; ok {
				return
			}
			seen[path] = from
			if p := pkgs[path]; p != nil {
				for _, imp := range p.Imports {
					walk(imp, path)
				}
			}
		}
		walk(path, "")
		return seen
	}
	for dep, from := range deps(self) {
		if dep == engine || clients[dep] {
			t.Errorf("load/conn imports %s (through %s): the connection layer sits below the engine and its clients", dep, from)
		}
	}
	for dep, from := range deps(engine) {
		if clients[dep] {
			t.Errorf("load imports its client %s (through %s)", dep, from)
		}
	}
	for path := range clients {
		p := pkgs[path]
		for _, name := range p.GoFiles {
			file := filepath.Join(p.Dir, name)
			for _, id := range loadNames(t, file) {
				if connSetUp.MatchString(id) {
					t.Errorf("%s names load.%s: connection set-up is package conn's", file, id)
				}
			}
		}
	}
}

// loadNames lists the identifiers file selects from package load.
func loadNames(t *testing.T, file string) []string {
	f, err := parser.ParseFile(token.NewFileSet(), file, nil, parser.SkipObjectResolution)
	if err != nil {
		t.Fatal(err)
	}
	name := ""
	for _, imp := range f.Imports {
		if p, _ := strconv.Unquote(imp.Path.Value); p == module+"load" {
			name = "load"
			if imp.Name != nil {
				name = imp.Name.Name
			}
		}
	}
	if name == "" {
		return nil
	}
	var ids []string
	ast.Inspect(f, func(n ast.Node) bool {
		if sel, ok := n.(*ast.SelectorExpr); ok {
			if x, ok := sel.X.(*ast.Ident); ok && x.Name == name {
				ids = append(ids, sel.Sel.Name)
			}
		}
		return true
	})
	return ids
}
