package keydist

import (
	"errors"
	"math"
	"testing"
)

// TestSizesMix: over many keys, a list's sizes come in its weights and a
// range's uniformly (chi-square at p = 0.001), and a key's size is the
// same every time it is asked for.
func TestSizesMix(t *testing.T) {
	const keys = 100_000
	list, err := ParseList("100:70,1000:20,10000:10")
	if err != nil {
		t.Fatal(err)
	}
	count := map[int]float64{}
	for k := range int64(keys) {
		s := list.Of(9, k)
		if s != list.Of(9, k) {
			t.Fatalf("key %d: size changes", k)
		}
		count[s]++
	}
	stat := 0.0
	for _, w := range list.List {
		e := float64(keys) * float64(w.Weight) / 100
		stat += (count[w.Size] - e) * (count[w.Size] - e) / e
	}
	if stat > 13.8 { // chi-square, 2 degrees of freedom, p = 0.001
		t.Errorf("list sizes %v: chi-square %.1f", count, stat)
	}

	rng, err := ParseRange("10-19")
	if err != nil {
		t.Fatal(err)
	}
	per := make([]float64, 10)
	for k := range int64(keys) {
		s := rng.Of(9, k)
		if s < 10 || s > 19 {
			t.Fatalf("size %d outside 10-19", s)
		}
		per[s-10]++
	}
	stat = 0
	for _, o := range per {
		stat += (o - keys/10) * (o - keys/10) / (keys / 10)
	}
	if stat > 27.9 { // 9 degrees of freedom, p = 0.001
		t.Errorf("range sizes %v: chi-square %.1f", per, stat)
	}
	// Another seed gives other sizes to the same keys.
	same := 0
	for k := range int64(1000) {
		if rng.Of(9, k) == rng.Of(10, k) {
			same++
		}
	}
	if math.Abs(float64(same)-100) > 50 {
		t.Errorf("seeds 9 and 10 agree on %d of 1000 keys' sizes, want about 100", same)
	}
	if (Sizes{Fixed: 128}).Of(1, 5) != 128 {
		t.Errorf("a fixed size varies")
	}
}

func TestSizesParse(t *testing.T) {
	z, err := ParseRange("1-4096")
	if lo, hi := z.Bounds(); err != nil || lo != 1 || hi != 4096 || z.String() != "1-4096" {
		t.Errorf("range: %v %v %d %d", z, err, lo, hi)
	}
	z, err = ParseList("64:1,32:3")
	if lo, hi := z.Bounds(); err != nil || lo != 32 || hi != 64 || z.String() != "64:1,32:3" {
		t.Errorf("list: %v %v %d %d", z, err, lo, hi)
	}
	for _, bad := range []string{"", "5", "5-4", "0-4", "a-b"} {
		if _, err := ParseRange(bad); !errors.Is(err, ErrSpec) {
			t.Errorf("range %q: %v", bad, err)
		}
	}
	for _, bad := range []string{"", "5", "5:0", "0:1", "5:1,", "a:1"} {
		if _, err := ParseList(bad); !errors.Is(err, ErrSpec) {
			t.Errorf("list %q: %v", bad, err)
		}
	}
}
