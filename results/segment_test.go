package results

import (
	"errors"
	"testing"
)

// TestSegmentStripes: a bounded open-loop run's requests split into the
// stripes segmentPacer sends; they add up to the whole run's.
func TestSegmentStripes(t *testing.T) {
	t.Parallel()
	for _, n := range []int{1, 2, 3, 4, 7} {
		for _, q := range []int64{0, 1, 3, 4, 5, 100, 1001} {
			var sum int64
			for i := 1; i <= n; i++ {
				s := Segment{I: i, N: n}
				var want int64 // arrivals k < q with k ≡ i−1 (mod n), counted
				for k := int64(i - 1); k < q; k += int64(n) {
					want++
				}
				if got := s.stripe(q); got != want {
					t.Errorf("stripe %d of %d of q=%d: %d, want %d", i, n, q, got, want)
				}
				sum += s.stripe(q)
			}
			if sum != q {
				t.Errorf("n=%d q=%d: stripes add to %d", n, q, sum)
			}
		}
	}

}

func TestParseSegmentEnv(t *testing.T) {
	t.Parallel()
	env := func(v string) func(string) string {
		return func(k string) string {
			if k == IndexEnv {
				return v
			}
			return ""
		}
	}
	for _, tc := range []struct {
		s, idx string
		want   Segment
		ok     bool
	}{
		{"auto/4", "0", Segment{1, 4}, true},
		{"auto/4", "3", Segment{4, 4}, true},
		{"auto/1", "0", Segment{1, 1}, true},
		{"2/4", "3", Segment{2, 4}, true}, // explicit wins over the environment
		{"auto/4", "4", Segment{}, false},
		{"auto/4", "-1", Segment{}, false},
		{"auto/4", "", Segment{}, false},
		{"auto/4", "x", Segment{}, false},
		{"auto/0", "0", Segment{}, false},
		{"auto/", "0", Segment{}, false},
		{"auto", "0", Segment{}, false},
	} {
		got, err := ParseSegmentEnv(tc.s, env(tc.idx))
		if (err == nil) != tc.ok || (tc.ok && got != tc.want) {
			t.Errorf("ParseSegmentEnv(%q) with %s=%q = %v, %v; want %v ok=%v", tc.s, IndexEnv, tc.idx, got, err, tc.want, tc.ok)
		}
		if err != nil && !errors.Is(err, ErrOptions) {
			t.Errorf("%q: error %v is not ErrOptions", tc.s, err)
		}
	}
	if _, err := ParseSegment("auto/4"); err == nil {
		t.Error("ParseSegment (no environment) took auto/4")
	}
}

func FuzzParseSegment(f *testing.F) {
	for _, s := range []string{"1/4", "auto/4", "4/4", "0/1", "auto/", "9999999999/1", "1/-1"} {
		f.Add(s, "2")
	}
	f.Fuzz(func(t *testing.T, s, idx string) {
		seg, err := ParseSegmentEnv(s, func(string) string { return idx })
		if err != nil {
			return
		}
		if seg.N < 1 || seg.I < 1 || seg.I > seg.N {
			t.Fatalf("%q (index %q) gave %v", s, idx, seg)
		}
		if back, err := ParseSegment(seg.String()); err != nil || back != seg {
			t.Fatalf("%v does not round-trip: %v, %v", seg, back, err)
		}
	})
}
