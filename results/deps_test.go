package results

import (
	"go/build"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// module is this module's path: packages under it are read from disk.
const module = "github.com/wirebench/wirebench/"

// allowedDeps are the only packages outside the standard library that
// results may import, directly or through the module's own packages: the
// result model is plain data, importable without the load engine, its
// protocol clients or any of their libraries (gRPC, chromedp, redis…).
var allowedDeps = []string{
	module + "measure",                        // Histogram, Env
	module + "internal/lazy",                  // threshold's compiled regexp
	"github.com/HdrHistogram/hdrhistogram-go", // under measure.Histogram
	"golang.org/x/sys/unix",                   // measure's CPU affinity
}

// TestResultsImportsNoEngine walks the imports of results and its
// sub-packages (not their tests) through the module's own packages, and
// fails on any outside the standard library and allowedDeps: in
// particular on load, any load client, report or study. It reads the
// source files (go/build), so it is cheap and needs no network.
func TestResultsImportsNoEngine(t *testing.T) {
	root, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	var walk func(path, from string)
	walk = func(path, from string) {
		if seen[path] {
			return
		}
		seen[path] = true
		if !strings.HasPrefix(path, module) {
			if !slices.Contains(allowedDeps, path) {
				t.Errorf("results imports %s (through %s): the result model must not depend on it", path, from)
			}
			return
		}
		rel := strings.TrimPrefix(path, module)
		if rel != "results" && !strings.HasPrefix(rel, "results/") && !slices.Contains(allowedDeps, path) {
			t.Errorf("results imports %s (through %s): only measure and internal/lazy of this module are allowed", path, from)
			return
		}
		pkg, err := build.ImportDir(filepath.Join(root, rel), 0)
		if err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		for _, imp := range pkg.Imports {
			if first, _, _ := strings.Cut(imp, "/"); strings.Contains(first, ".") {
				walk(imp, path)
			}
		}
	}
	walk(module+"results", "results")
	walk(module+"results/stats", "results/stats")
	if len(seen) < 4 { // results, results/stats, measure and one outside: the walk ran
		t.Fatalf("walked only %v", seen)
	}
}
