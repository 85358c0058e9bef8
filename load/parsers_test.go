package load

import (
	"errors"
	"math"
	"strings"
	"testing"
	"time"
)

func TestParseDuration(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]time.Duration{
		"5": 5 * time.Second, "0.5": 500 * time.Millisecond, "5s": 5 * time.Second, "1m30s": 90 * time.Second,
		"250ms": 250 * time.Millisecond, " 2 ": 2 * time.Second, "0": 0,
	} {
		if got, err := ParseDuration(in); err != nil || got != want {
			t.Errorf("%q: %v, %v; want %v", in, got, err, want)
		}
	}
	for _, in := range []string{"", "-1", "-1s", "5x", "NaN", "1e30", "s"} {
		if _, err := ParseDuration(in); !errors.Is(err, ErrOptions) {
			t.Errorf("%q: err %v, want ErrOptions", in, err)
		}
	}
}

// FuzzParseDuration: never panics; an accepted duration is not negative
// and a bare number means seconds.
func FuzzParseDuration(f *testing.F) {
	for _, s := range []string{"5", "0.5", "5s", "1m30s", "-1", "1e30", "NaN", "Inf"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		d, err := ParseDuration(s)
		if err != nil {
			if !errors.Is(err, ErrOptions) {
				t.Fatalf("%q: error %v not ErrOptions", s, err)
			}
			return
		}
		if d < 0 {
			t.Fatalf("%q: negative %v", s, d)
		}
	})
}

// FuzzParseStages: never panics; accepted stages have non-negative
// durations and finite, non-negative targets, one per comma.
func FuzzParseStages(f *testing.F) {
	for _, s := range []string{"30s:50,1m:50,30s:100", "5:10", "1s:-1", "x", "1s:NaN,"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		st, err := ParseStages(s)
		if err != nil {
			if !errors.Is(err, ErrOptions) {
				t.Fatalf("%q: error %v not ErrOptions", s, err)
			}
			return
		}
		if len(st) != strings.Count(s, ",")+1 {
			t.Fatalf("%q: %d stages", s, len(st))
		}
		for _, x := range st {
			if x.Duration < 0 || x.Target < 0 || math.IsInf(x.Target, 0) || math.IsNaN(x.Target) {
				t.Fatalf("%q: stage %+v", s, x)
			}
		}
	})
}
