// Command timingtests prints, one line per package, the tests CI's timing
// step must run: every top-level Test function that reaches
// testkit.Timing() or testkit.NeedTiming(…), directly or through helpers of
// its own package. The timing step reruns only those, not whole packages:
// the rest already ran in the main suite and took most of the step's time.
//
//	go run ./scripts/timingtests          # "./load ^(TestA|TestB)$" per line
//	go run ./scripts/timingtests -skip    # "^(TestA|TestB|…)$": for the main suite's go test -skip
//
// With -skip it prints one pattern of the timing tests' names, for CI's
// main suite to leave them to the timing step, which runs each whole (its
// exact counts too): they ran twice in CI, e.g. TestCapacityStudyKnownRatio,
// 40 s each time. go test's -skip matches a name in every package, so a
// name that is also a test reaching no timing check in some package is
// left out (the main suite runs it everywhere).
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
	"maps"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

func main() {
	root, skip := ".", false
	for _, a := range os.Args[1:] {
		if a == "-skip" {
			skip = true
		} else {
			root = a
		}
	}
	if skip {
		names, err := skipNames(root)
		if err != nil {
			fmt.Fprintln(os.Stderr, "timingtests:", err)
			os.Exit(1)
		}
		if len(names) == 0 {
			fmt.Fprintln(os.Stderr, "timingtests: no timing test to skip")
			os.Exit(1)
		}
		fmt.Printf("^(%s)$\n", strings.Join(names, "|"))
		return
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
	byDir, err := testFiles(root)
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

// skipNames returns, sorted, the names of the timing tests that no
// package under root also has as a test reaching no timing check, and
// whose work does not change with the switch: the names a go test -skip
// over every package may leave to the timing step.
func skipNames(root string) ([]string, error) {
	byDir, err := testFiles(root)
	if err != nil {
		return nil, err
	}
	timing, other := map[string]bool{}, map[string]bool{}
	for _, files := range byDir {
		t := map[string]bool{}
		for _, name := range packageTimingTests(files) {
			t[name] = true
			timing[name] = true
		}
		for _, name := range packageSwitchedTests(files) {
			other[name] = true // the main suite runs it too
		}
		for _, f := range files {
			for _, decl := range f.Decls {
				if fd, ok := decl.(*ast.FuncDecl); ok && fd.Recv == nil && strings.HasPrefix(fd.Name.Name, "Test") && !t[fd.Name.Name] {
					other[fd.Name.Name] = true
				}
			}
		}
	}
	var names []string
	for name := range timing {
		if !other[name] {
			names = append(names, name)
		}
	}
	sort.Strings(names)
	return names, nil
}

// testFiles parses the test files under root, by package directory
// (relative to root), leaving out testdata, hidden directories,
// node_modules and nested modules.
func testFiles(root string) (map[string][]*ast.File, error) {
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
	return byDir, nil
}

// packageTimingTests finds the timing tests of one package's test files
// (internal and external test packages together: a name calls whichever
// function of that name the files declare, a safe over-approximation).
func packageTimingTests(files []*ast.File) []string {
	calls, timing, _ := scanPackage(files)
	return testsReaching(calls, timing)
}

// packageSwitchedTests finds the tests of one package's files that reach a
// function whose work, not only its checks, depends on the switch: an `if`
// on testkit.Timing() whose body assigns (TestDistributedEqualsSingle runs
// its load by -n in the main suite and by -d in the timing step), or
// Timing()'s value stored. The main suite must run those too.
func packageSwitchedTests(files []*ast.File) []string {
	calls, _, switched := scanPackage(files)
	return testsReaching(calls, switched)
}

// scanPackage maps each function of the files (a method by "."+name) to
// the names it refers to, and tells which call testkit.Timing or
// NeedTiming themselves and which of those switch their work on it.
func scanPackage(files []*ast.File) (calls map[string]map[string]bool, timing, switched map[string]bool) {
	calls = map[string]map[string]bool{} // function → names it calls
	timing = map[string]bool{}           // function → calls testkit.Timing/NeedTiming itself
	switched = map[string]bool{}         // function → does other work with Timing() on
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
					if isTimingSwitch(x) || isNeedTiming(x) {
						timing[name] = true
					}
					calls[name]["."+x.Sel.Name] = true
				case *ast.Ident:
					calls[name][x.Name] = true
				case *ast.IfStmt:
					if mentionsTiming(x.Cond) && assigns(x.Body) {
						switched[name] = true
					}
				case *ast.AssignStmt:
					for _, r := range x.Rhs {
						if mentionsTiming(r) {
							switched[name] = true
						}
					}
				case *ast.ValueSpec:
					for _, v := range x.Values {
						if mentionsTiming(v) {
							switched[name] = true
						}
					}
				}
				return true
			})
		}
	}
	return calls, timing, switched
}

func isTimingSwitch(x *ast.SelectorExpr) bool {
	id, ok := x.X.(*ast.Ident)
	return ok && id.Name == "testkit" && x.Sel.Name == "Timing"
}

func isNeedTiming(x *ast.SelectorExpr) bool {
	id, ok := x.X.(*ast.Ident)
	return ok && id.Name == "testkit" && x.Sel.Name == "NeedTiming"
}

func mentionsTiming(n ast.Node) bool {
	found := false
	ast.Inspect(n, func(n ast.Node) bool {
		if x, ok := n.(*ast.SelectorExpr); ok && isTimingSwitch(x) {
			found = true
		}
		return !found
	})
	return found
}

// assigns tells whether n sets a variable it did not declare itself (=,
// +=, ++…): the work after it may differ. Checks declare theirs (:=).
func assigns(n ast.Node) bool {
	found := false
	ast.Inspect(n, func(n ast.Node) bool {
		switch x := n.(type) {
		case *ast.AssignStmt:
			found = x.Tok != token.DEFINE
		case *ast.IncDecStmt:
			found = true
		}
		return !found
	})
	return found
}

// testsReaching returns, sorted, the top-level tests among calls' functions
// that are in set or reach a function in set through calls.
func testsReaching(calls map[string]map[string]bool, set map[string]bool) []string {
	reach := maps.Clone(set)
	// Propagate to a fixed point: a function reaching one in the set is one.
	for changed := true; changed; {
		changed = false
		for fn, callees := range calls {
			if reach[fn] {
				continue
			}
			for c := range callees {
				if reach[c] {
					reach[fn] = true
					changed = true
					break
				}
			}
		}
	}
	var tests []string
	for fn := range reach {
		if strings.HasPrefix(fn, "Test") && fn != "TestMain" {
			tests = append(tests, fn)
		}
	}
	sort.Strings(tests)
	return tests
}
