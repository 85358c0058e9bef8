package scenario

import (
	"testing"
)

// TestKVKeysAndValues: keys are redis-benchmark's, values are derived
// from keys, sized exactly, and differ between keys.
func TestKVKeysAndValues(t *testing.T) {
	if k := string(appendKVKey(nil, 1234)); k != "key:000000001234" {
		t.Errorf("key %q", k)
	}
	if v := string(appendKVValue(nil, 1234, 30)); v != "000000001234.000000001234.0000" {
		t.Errorf("value %q", v)
	}
	for _, size := range []int{1, 12, 13, 14, 128, 1000} {
		a, b := appendKVValue([]byte("prefix"), 5, size), appendKVValue(nil, 6, size)
		if len(a) != size+6 || len(b) != size || string(a[6:]) == string(b) && size > 11 {
			t.Errorf("size %d: %q %q", size, a, b)
		}
	}
}
