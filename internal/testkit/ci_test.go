package testkit

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/wirebench/wirebench/internal/race"
)

// TestPeerStepRunsEveryPeerTest: a test that calls NeedPeers is skipped
// in the main suite, so CI's peer step (.ci/run) must select it, by its
// package and its -run pattern; else it would run nowhere. And the step
// selects nothing else: a test of its packages that does not call
// NeedPeers already ran in the main suite, and a second run is CI time
// spent on nothing (the chromium cases of load/browser ran twice, 2026-11-30).
func TestPeerStepRunsEveryPeerTest(t *testing.T) {
	if race.Enabled {
		t.Skip("a walk of the source files on one goroutine, nothing for the race detector (CI's race step): the main suite runs it")
	}
	root, err := moduleRoot()
	if err != nil {
		t.Fatal(err)
	}
	ci, err := os.ReadFile(filepath.Join(root, ".ci", "run"))
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`(?m)^peer_run='([^']+)'\npeer_pkgs=\(([^)]+)\)$`).FindSubmatch(ci)
	if m == nil {
		t.Fatal(".ci/run has no peer_run='…' line followed by a peer_pkgs=(…) line")
	}
	run := regexp.MustCompile(string(m[1]))
	pkgs := strings.Fields(string(m[2]))
	found := 0
	err = filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (strings.HasPrefix(d.Name(), ".") || d.Name() == "node_modules" || d.Name() == "testdata") && p != root {
			return filepath.SkipDir
		}
		if !strings.HasSuffix(p, "_test.go") || filepath.Dir(p) == filepath.Join(root, "internal", "testkit") {
			return nil
		}
		f, err := parser.ParseFile(token.NewFileSet(), p, nil, 0)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, filepath.Dir(p))
		for _, decl := range f.Decls {
			fn, ok := decl.(*ast.FuncDecl)
			if !ok || fn.Body == nil || !strings.HasPrefix(fn.Name.Name, "Test") {
				continue
			}
			if !callsNeedPeers(fn.Body) {
				if run.MatchString(fn.Name.Name) && slices.Contains(pkgs, "./"+filepath.ToSlash(rel)) && fn.Name.Name != "TestMain" {
					t.Errorf("%s (%s) does not call NeedPeers, so the main suite runs it, but .ci/run's peer step (-run %q) runs it again: narrow the pattern or rename the test", fn.Name.Name, rel, m[1])
				}
				continue
			}
			found++
			if !run.MatchString(fn.Name.Name) || !slices.Contains(pkgs, "./"+filepath.ToSlash(rel)) {
				t.Errorf("%s (%s) calls NeedPeers but .ci/run's peer step (-run %q %v) does not run it", fn.Name.Name, rel, m[1], pkgs)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if found < 10 {
		t.Errorf("found %d tests calling testkit.NeedPeers; the walk missed them", found)
	}
}

func callsNeedPeers(body *ast.BlockStmt) bool {
	calls := false
	ast.Inspect(body, func(n ast.Node) bool {
		if sel, ok := n.(*ast.SelectorExpr); ok && sel.Sel.Name == "NeedPeers" {
			if x, ok := sel.X.(*ast.Ident); ok && x.Name == "testkit" {
				calls = true
			}
		}
		return !calls
	})
	return calls
}
