package capacity

import (
	"errors"
	"testing"
)

func TestParsePrecisionAndQuota(t *testing.T) {
	for s, want := range map[string]float64{"5%": 0.05, "0.05": 0.05, " 10% ": 0.1, "100%": 1} {
		if p, err := ParsePrecision(s); err != nil || p != want {
			t.Errorf("precision %q: %g, %v; want %g", s, p, err, want)
		}
	}
	for _, s := range []string{"", "0", "-5%", "2", "NaN", "5%%", "150%", "x"} {
		if _, err := ParsePrecision(s); !errors.Is(err, ErrOptions) {
			t.Errorf("precision %q: %v, want ErrOptions", s, err)
		}
	}
	for s, want := range map[string]float64{"auto": 0, "": 0, "off": -1, "0": -1, "0.5": 0.5} {
		if q, err := ParseQuota(s); err != nil || q != want {
			t.Errorf("quota %q: %g, %v; want %g", s, q, err, want)
		}
	}
	if _, err := ParseQuota("2000"); err == nil {
		t.Error("quota 2000: no error")
	}
}

// FuzzParsePrecision: an accepted precision is a fraction in (0, 1].
func FuzzParsePrecision(f *testing.F) {
	for _, s := range []string{"5%", "0.05", "100%", "0", "1e-400", "NaN%", "inf"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if v, err := ParsePrecision(s); err == nil && !(v > 0 && v <= 1) {
			t.Fatalf("%q: accepted %v", s, v)
		}
	})
}
