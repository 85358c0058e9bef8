package main

import (
	"os"
	"os/exec"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// TestPackagesDocumented: docs/packages.md names every package of the
// module (go list ./...) in the first column of its tables, and no package
// that is gone.
func TestPackagesDocumented(t *testing.T) {
	cmd := exec.Command("go", "list", "./...")
	cmd.Dir = "../.."
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	const module = "github.com/wirebench/wirebench/"
	var pkgs []string
	for _, p := range strings.Fields(string(out)) {
		pkgs = append(pkgs, strings.TrimPrefix(p, module))
	}
	if !slices.Contains(pkgs, "results") || len(pkgs) < 50 {
		t.Fatalf("go list gave %d packages: %v", len(pkgs), pkgs)
	}
	doc, err := os.ReadFile("../../docs/packages.md")
	if err != nil {
		t.Fatal(err)
	}
	named := documentedPackages(string(doc))
	for _, p := range pkgs {
		if !named[p] {
			t.Errorf("docs/packages.md does not name package %s: add a row with its one job", p)
		}
	}
	for p := range named {
		if !slices.Contains(pkgs, p) {
			t.Errorf("docs/packages.md names package %s, which go list does not have", p)
		}
	}
}

// documentedPackages are the `paths` in the first column of the page's
// package tables (those headed "| package |").
func documentedPackages(doc string) map[string]bool {
	named := map[string]bool{}
	inTable := false
	code := regexp.MustCompile("`([^`]+)`")
	for _, line := range strings.Split(doc, "\n") {
		switch {
		case strings.HasPrefix(line, "| package |"):
			inTable = true
		case !strings.HasPrefix(line, "|"):
			inTable = false
		case inTable && !strings.HasPrefix(line, "|---"):
			first, _, _ := strings.Cut(strings.TrimPrefix(line, "|"), "|")
			for _, m := range code.FindAllStringSubmatch(first, -1) {
				named[strings.TrimSuffix(m[1], "/")] = true
			}
		}
	}
	return named
}
