package gate

import (
	"go/build"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestGateImportsNoEngine keeps the verdict a set of pure functions over
// results data: gate may import, from this module, only results (and what
// results itself may import); nothing of load, study, report or a client.
func TestGateImportsNoEngine(t *testing.T) {
	const module = "github.com/wirebench/wirebench/"
	allowed := []string{"gate", "results", "results/stats", "measure", "internal/lazy"}
	root, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	var walk func(rel, from string)
	walk = func(rel, from string) {
		if seen[rel] {
			return
		}
		seen[rel] = true
		if !slices.Contains(allowed, rel) {
			t.Errorf("gate imports %s (through %s)", rel, from)
			return
		}
		pkg, err := build.ImportDir(filepath.Join(root, rel), 0)
		if err != nil {
			t.Fatalf("%s: %v", rel, err)
		}
		for _, imp := range pkg.Imports {
			if r, ok := strings.CutPrefix(imp, module); ok {
				walk(r, rel)
			}
		}
	}
	walk("gate", "gate")
	if !seen["results/stats"] || !seen["measure"] {
		t.Fatalf("the walk did not reach results/stats and measure: %v", seen)
	}
}
