package keydist

import (
	"fmt"
	"strconv"
	"strings"
)

// Sizes are value sizes in bytes: one size, a range, or a weighted list
// (memtier_benchmark's --data-size, --data-size-range, --data-size-list).
// A key's size is a function of the key and a seed (Of), not a fresh
// draw per write: every write of a key has the same length, so a read's
// reply is checked to the byte, and the preload writes each key at the
// size the load will. Across keys the sizes follow the given mix; across
// requests they follow it weighted by how often each key is asked for.
type Sizes struct {
	Fixed int        `json:"fixed,omitempty"`
	Min   int        `json:"min,omitempty"` // a range, both ends included
	Max   int        `json:"max,omitempty"`
	List  []Weighted `json:"list,omitempty"`
}

// Weighted is one size of a list and its weight.
type Weighted struct {
	Size   int `json:"size"`
	Weight int `json:"weight"`
}

// ParseRange reads MIN-MAX.
func ParseRange(s string) (Sizes, error) {
	a, b, ok := strings.Cut(s, "-")
	lo, err1 := strconv.Atoi(a)
	hi, err2 := strconv.Atoi(b)
	if !ok || err1 != nil || err2 != nil || lo < 1 || hi < lo {
		return Sizes{}, fmt.Errorf("%w: size range %q: want MIN-MAX bytes, 1 ≤ MIN ≤ MAX", ErrSpec, s)
	}
	return Sizes{Min: lo, Max: hi}, nil
}

// ParseList reads SIZE:WEIGHT,SIZE:WEIGHT,...
func ParseList(s string) (Sizes, error) {
	var z Sizes
	for _, f := range strings.Split(s, ",") {
		a, b, ok := strings.Cut(f, ":")
		size, err1 := strconv.Atoi(a)
		w, err2 := strconv.Atoi(b)
		if !ok || err1 != nil || err2 != nil || size < 1 || w < 1 || w > 1<<20 {
			return Sizes{}, fmt.Errorf("%w: size list %q: want SIZE:WEIGHT,... (sizes ≥ 1 byte, weights 1..%d)", ErrSpec, s, 1<<20)
		}
		z.List = append(z.List, Weighted{size, w})
	}
	return z, nil
}

// String is the sizes as given: 128, 100-1000, 100:9,1000:1.
func (z Sizes) String() string {
	switch {
	case len(z.List) > 0:
		var b strings.Builder
		for i, w := range z.List {
			if i > 0 {
				b.WriteByte(',')
			}
			fmt.Fprintf(&b, "%d:%d", w.Size, w.Weight)
		}
		return b.String()
	case z.Max > 0:
		return fmt.Sprintf("%d-%d", z.Min, z.Max)
	}
	return strconv.Itoa(z.Fixed)
}

// Bounds are the smallest and the largest size.
func (z Sizes) Bounds() (lo, hi int) {
	switch {
	case len(z.List) > 0:
		lo, hi = z.List[0].Size, z.List[0].Size
		for _, w := range z.List {
			lo, hi = min(lo, w.Size), max(hi, w.Size)
		}
		return lo, hi
	case z.Max > 0:
		return z.Min, z.Max
	}
	return z.Fixed, z.Fixed
}

// Of is key k's size under seed.
func (z Sizes) Of(seed uint64, k int64) int {
	switch {
	case len(z.List) > 0:
		total := 0
		for _, w := range z.List {
			total += w.Weight
		}
		u := int(mix(seed, k) % uint64(total))
		for _, w := range z.List {
			if u < w.Weight {
				return w.Size
			}
			u -= w.Weight
		}
	case z.Max > 0:
		return z.Min + int(mix(seed, k)%uint64(z.Max-z.Min+1))
	}
	return z.Fixed
}

// mix is SplitMix64's finalizer over the seed and the key: a key's size
// is independent of its neighbours' and of its place in the distribution.
func mix(seed uint64, k int64) uint64 {
	x := seed ^ (uint64(k)+1)*0x9e3779b97f4a7c15
	x = (x ^ x>>30) * 0xbf58476d1ce4e5b9
	x = (x ^ x>>27) * 0x94d049bb133111eb
	return x ^ x>>31
}
