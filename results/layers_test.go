package results

import "testing"

// Every field is in Total and in Add (positional: a new field breaks the
// literal until it is added here too).
func TestLayersTotalAndAdd(t *testing.T) {
	a := Layers{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11}
	if a.Total() != 66 || a.Add(a).Total() != 132 || a.Add(a) != (Layers{2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22}) {
		t.Fatalf("Total %d, Add %+v", a.Total(), a.Add(a))
	}
}
