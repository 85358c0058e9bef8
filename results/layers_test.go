package results

import "testing"

func TestLayersTotalAndAdd(t *testing.T) {
	a := Layers{1, 2, 3, 4, 5, 6, 7, 8}
	if a.Total() != 36 || a.Add(a).Total() != 72 {
		t.Fatalf("Total %d, Add %+v", a.Total(), a.Add(a))
	}
}
