// Package linked writes and checks the linked.go of a bare yardstick
// (bench/grpcgobare, bench/h3bare): a file, built only with -tags
// linked, that blank-imports packages the one wirebench binary links, so
// that the bare server runs their inits and carries their code, globals
// and start-up heap (LINKED=1 in the bench scripts).
package linked

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"slices"
	"strings"
	"testing"
)

// Pkg is one package `go list -deps ./cmd/wirebench` gives.
type Pkg struct {
	Path, Name string
	Std        bool
}

// Source is linked.go: header (the generated-code line, the build
// constraint, the doc and the package clause), then a blank import of
// every package of cmd/wirebench's dependencies keep selects, sorted as
// gofmt sorts them, plus extra. Fewer than min is an error (go list
// failing quietly would write an empty list). dir is the path from the
// calling package to the module root ("../..").
func Source(dir, header string, keep func(Pkg) bool, extra []string, min int) ([]byte, error) {
	out, err := exec.Command("go", "list", "-deps", "-f", "{{.ImportPath}} {{.Name}} {{.Standard}}", dir+"/cmd/wirebench").Output()
	if err != nil {
		return nil, fmt.Errorf("go list -deps ./cmd/wirebench: %w", err)
	}
	paths := slices.Clone(extra)
	for line := range strings.Lines(string(out)) {
		f := strings.Fields(line)
		if len(f) != 3 {
			continue
		}
		if p := (Pkg{Path: f[0], Name: f[1], Std: f[2] == "true"}); p.Name != "main" && keep(p) {
			paths = append(paths, p.Path)
		}
	}
	if len(paths) < min {
		return nil, fmt.Errorf("go list -deps ./cmd/wirebench: only %d packages", len(paths))
	}
	slices.Sort(paths)
	var b bytes.Buffer
	b.WriteString(header)
	b.WriteString("import (\n")
	for _, p := range paths {
		fmt.Fprintf(&b, "\t_ %q\n", p)
	}
	b.WriteString(")\n")
	return b.Bytes(), nil
}

// Check is a TestLinkedList: with update it rewrites linked.go from want,
// else it fails when linked.go is not want's, naming the command that
// rewrites it (gen).
func Check(t *testing.T, update bool, want func() ([]byte, error), gen string) {
	t.Helper()
	w, err := want()
	if err != nil {
		t.Fatal(err)
	}
	if update {
		if err := os.WriteFile("linked.go", w, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	got, err := os.ReadFile("linked.go")
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, w) {
		t.Fatalf("linked.go is not cmd/wirebench's package list of now: run %s", gen)
	}
}

// Importable is Go's internal rule: whether path may be imported from the
// package from.
func Importable(from, path string) bool {
	i := strings.LastIndex(path, "/internal/")
	if strings.HasSuffix(path, "/internal") {
		i = len(path) - len("/internal")
	}
	if i < 0 {
		return true
	}
	return strings.HasPrefix(from, path[:i]+"/")
}
