package study

import "testing"

// examples/catalog/study.yaml (docs/grpc.md's worked example) parses into
// its two cells: REST as raw HTTP checked by body, gRPC calling a method
// wirebench does not know, by reflection, with its checks.
func TestCatalogExampleStudyParses(t *testing.T) {
	def, err := ParseFile("../examples/catalog/study.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if len(def.Cells) != 2 {
		t.Fatalf("%d cells, want rest and grpc", len(def.Cells))
	}
	for _, c := range def.Cells {
		switch c.Label {
		case "rest":
			if r := c.Load.Raw; r == nil || r.URL != "http://127.0.0.1:{port}/items/7" || r.ExpectBodyContains == "" {
				t.Errorf("rest cell: %+v", r)
			}
		case "grpc":
			if g := c.Load.GRPC; g == nil || g.Method != "shop.v1.Catalog/GetItem" || len(g.Expect) != 2 {
				t.Errorf("grpc cell: %+v", g)
			}
		default:
			t.Errorf("cell %q", c.Label)
		}
		if len(c.Server.Command) == 0 || c.Server.Command[0] != "./catalog" {
			t.Errorf("cell %s: server %v, want the example's ./catalog", c.Label, c.Server.Command)
		}
	}
}
