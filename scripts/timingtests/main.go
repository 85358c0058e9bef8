// Command timingtests prints, one line per package, the tests CI's timing
// step must run: every top-level Test function that reaches
// testkit.Timing() or testkit.NeedTiming(…), directly or through helpers of
// its own package. The timing step reruns only those, not whole packages:
// the rest already ran in the main suite and took most of the step's time.
//
//	go run ./scripts/timingtests          # "./load ^(TestA|TestB)$" per line
//
// It reads the test files' syntax only (go/parser): a helper reached
// through a function value or another package is not followed; a test
// that reaches a timing check that way must call testkit.Timing() itself.
package main

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

func main() {
	root := "."
	if len(os.Args) > 1 {
		root = os.Args[1]
	}
	pkgs, err := timingTests(root)
	if err != nil {
		fmt.Fprintln(os.Stderr, "timingtests:", err)
		os.Exit(1)
	}
	dirs := make([]string, 0, len(pkgs))
	for d := range pkgs {
		dirs = append(dirs, d)
	}
	sort.Strings(dirs)
	for _, d := range dirs {
		fmt.Printf("./%s ^(%s)$\n", filepath.ToSlash(d), strings.Join(pkgs[d], "|"))
	}
}

// timingTests maps each package directory under root (relative to it) to
// the sorted names of its top-level tests that reach a timing check.
func timingTests(root string) (map[string][]string, error) {
	byDir := map[string][]*ast.File{}
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			name := d.Name()
			if path != root && (strings.HasPrefix(name, ".") || name == "testdata" || name == "node_modules") {
				return filepath.SkipDir
			}
			if path != root {
				// A nested module (bench/jsonlibs…) is not part of this one's go test.
				if _, err := os.Stat(filepath.Join(path, "go.mod")); err == nil {
					return filepath.SkipDir
				}
			}
			return nil
		}
		if !strings.HasSuffix(path, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(token.NewFileSet(), path, nil, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(root, filepath.Dir(path))
		if err != nil {
			return err
		}
		byDir[rel] = append(byDir[rel], f)
		return nil
	})
	if err != nil {
		return nil, err
	}
	out := map[string][]string{}
	for dir, files := range byDir {
		if tests := packageTimingTests(files); len(tests) > 0 {
			out[dir] = tests
		}
	}
	return out, nil
}

// packageTimingTests finds the timing tests of one package's test files
// (internal and external test packages together: a name calls whichever
// function of that name the files declare, a safe over-approximation).
func packageTimingTests(files []*ast.File) []string {
	calls := map[string]map[string]bool{} // function → names it calls
	timing := map[string]bool{}           // function → calls testkit.Timing/NeedTiming itself
	for _, f := range files {
		for _, decl := range f.Decls {
			fd, ok := decl.(*ast.FuncDecl)
			if !ok || fd.Body == nil {
				continue
			}
			name := fd.Name.Name
			if fd.Recv != nil {
				// Methods are reached by name too (x.helper()): key them by name alone.
				name = "." + name
			}
			if calls[name] == nil {
				calls[name] = map[string]bool{}
			}
			ast.Inspect(fd.Body, func(n ast.Node) bool {
				switch x := n.(type) {
				case *ast.SelectorExpr:
					if id, ok := x.X.(*ast.Ident); ok && id.Name == "testkit" && (x.Sel.Name == "Timing" || x.Sel.Name == "NeedTiming") {
						timing[name] = true
					}
					calls[name]["."+x.Sel.Name] = true
				case *ast.Ident:
					calls[name][x.Name] = true
				}
				return true
			})
		}
	}
	// Propagate to a fixed point: a function reaching a timing function is one.
	for changed := true; changed; {
		changed = false
		for fn, callees := range calls {
			if timing[fn] {
				continue
			}
			for c := range callees {
				if timing[c] {
					timing[fn] = true
					changed = true
					break
				}
			}
		}
	}
	var tests []string
	for fn := range timing {
		if strings.HasPrefix(fn, "Test") && fn != "TestMain" {
			tests = append(tests, fn)
		}
	}
	sort.Strings(tests)
	return tests
}
