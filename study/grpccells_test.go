package study

import (
	"slices"
	"strings"
	"testing"
)

// TestGRPCCellsOnGrpcGo: every built-in study's reference server serves
// gRPC on grpc-go (DESIGN rule 9), except the cells labelled as our lean
// transport, which grpc-vs-rest has in each CRUD group and never as its
// only gRPC row.
func TestGRPCCellsOnGrpcGo(t *testing.T) {
	for _, name := range []string{"formats", "json-libs", "grpc-vs-rest"} {
		def, err := Lookup(name)
		if err != nil {
			t.Fatal(err)
		}
		lean := map[string]int{}
		for _, c := range def.Cells {
			if c.Server == nil {
				continue
			}
			got := transportOf(c.Server.Command)
			want := "grpc-go"
			if c.Label == leanLabel {
				want = "lean"
				lean[c.Group]++
			}
			if got != want {
				t.Errorf("%s/%s: gRPC transport %q, want %q (argv %q)", name, c.ID(), got, want, c.Server.Command)
			}
			if got == "lean" && !strings.Contains(c.Label, "of ours") {
				t.Errorf("%s/%s: lean transport not labelled as ours", name, c.ID())
			}
		}
		if name == "grpc-vs-rest" {
			if def.Notes == nil {
				t.Error("grpc-vs-rest explains nothing: no Notes")
			}
			for _, g := range []string{"CRUD c=1", "CRUD c=50"} {
				if lean[g] != 1 {
					t.Errorf("group %q: %d lean cells, want 1", g, lean[g])
				}
			}
		}
	}
}

// transportOf is the --grpc-transport `wirebench serve` ends up with: the
// last one given (flag package semantics), or serve's default.
func transportOf(argv []string) string {
	got := "(serve's default)"
	for i, a := range argv {
		if a == "--grpc-transport" && i+1 < len(argv) {
			got = argv[i+1]
		}
	}
	if !slices.Contains(argv, "serve") {
		return "(not wirebench serve)"
	}
	return got
}
