package stats

import (
	"math"
	"math/rand/v2"
	"testing"
)

// R's example (?wilcox.test, the depression scores): x − y paired, V = 40,
// two-sided p = 0.03906 (exact).
func TestSignedRankMatchesR(t *testing.T) {
	x := []float64{1.83, 0.50, 1.62, 2.48, 1.68, 1.88, 1.55, 3.06, 1.30}
	y := []float64{0.878, 0.647, 0.598, 2.05, 1.06, 1.29, 1.06, 3.14, 1.29}
	d := make([]float64, len(x))
	for i := range x {
		d[i] = x[i] - y[i]
	}
	if p := SignedRank(d); math.Abs(p-0.0390625) > 1e-9 {
		t.Errorf("p = %v, want 0.0390625 (R: V = 40, p-value = 0.03906)", p)
	}
}

func TestSignedRankEdges(t *testing.T) {
	for _, c := range []struct {
		ds   []float64
		want float64
	}{
		{nil, 1},
		{[]float64{0, 0, 0}, 1},
		{[]float64{1, 2, 3, 4, 5, 6}, 2.0 / 64},          // every sign positive: the smallest p of 6
		{[]float64{-1, -2, -3, -4, -5, -6, 0}, 2.0 / 64}, // the zero is dropped
		{[]float64{1, 2, 3, 4, 5}, 2.0 / 32},             // 5 can never reach 0.05
		{[]float64{1, -1, 2, -2}, 1},
	} {
		if p := SignedRank(c.ds); math.Abs(p-c.want) > 1e-12 {
			t.Errorf("SignedRank(%v) = %v, want %v", c.ds, p, c.want)
		}
	}
}

// The exact distribution, ties included, against counting every one of the
// 2^n sign assignments of the same magnitudes.
func TestSignedRankExactAgainstEnumeration(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for trial := range 300 {
		n := 1 + r.IntN(12)
		ds := make([]float64, n)
		for i := range ds {
			ds[i] = float64(r.IntN(7) - 3) // small integers: many ties and zeros
			if trial%3 == 0 {
				ds[i] = r.NormFloat64()
			}
		}
		if got, want := SignedRank(ds), enumerateSignedRank(ds); math.Abs(got-want) > 1e-9 {
			t.Fatalf("SignedRank(%v) = %v, enumeration %v", ds, got, want)
		}
	}
}

func enumerateSignedRank(ds []float64) float64 {
	var abs []float64
	var pos []bool
	for _, d := range ds {
		if d != 0 {
			abs = append(abs, math.Abs(d))
			pos = append(pos, d > 0)
		}
	}
	n := len(abs)
	if n == 0 {
		return 1
	}
	rank := make([]float64, n) // mid-ranks by counting
	for i := range abs {
		less, eq := 0, 0
		for j := range abs {
			if abs[j] < abs[i] {
				less++
			} else if abs[j] == abs[i] {
				eq++
			}
		}
		rank[i] = float64(less) + float64(eq+1)/2
	}
	w := 0.0
	for i := range abs {
		if pos[i] {
			w += rank[i]
		}
	}
	var lo, hi int
	for mask := range 1 << n {
		s := 0.0
		for i := range n {
			if mask&(1<<i) != 0 {
				s += rank[i]
			}
		}
		if s <= w+1e-9 {
			lo++
		}
		if s >= w-1e-9 {
			hi++
		}
	}
	return math.Min(1, 2*float64(min(lo, hi))/float64(int(1)<<n))
}

// Above the exact limit the normal approximation: far from the null a tiny
// p, at it p = 1, and near the limit within 0.01 of the exact value.
func TestSignedRankNormal(t *testing.T) {
	n := signedRankExactLimit + 50
	up, mixed := make([]float64, n), make([]float64, n)
	for i := range n {
		up[i] = float64(i + 1)
		mixed[i] = float64(i + 1)
		if i%2 == 1 {
			mixed[i] = -mixed[i]
		}
	}
	if p := SignedRank(up); p > 1e-10 {
		t.Errorf("all positive, n = %d: p = %v", n, p)
	}
	if p := SignedRank(mixed); p < 0.5 {
		t.Errorf("alternating signs, n = %d: p = %v, want near 1", n, p)
	}
	r := rand.New(rand.NewPCG(3, 4))
	ds := make([]float64, signedRankExactLimit)
	for i := range ds {
		ds[i] = r.NormFloat64() + 0.1
	}
	exact := SignedRank(ds)
	approx := SignedRank(append(ds, 0.5, -0.5)) // two more: normal, nearly the same statistic
	if math.Abs(exact-approx) > 0.05 {
		t.Errorf("exact %v, normal %v: more than 0.05 apart", exact, approx)
	}
}

// The depression scores again: the (pseudo)median difference is 0.46 (as
// R's wilcox.test(x, y, paired = TRUE, conf.int = TRUE)); for n = 9,
// P(W+ ≤ 5) = 10/512 ≤ 0.025 < P(W+ ≤ 6) = 14/512, so the 95% interval is
// the 6th smallest and 6th largest of the 45 Walsh averages (R's
// qsignrank rule), counted by hand: 0.01 (the difference 1.30 − 1.29
// itself) and (0.62 + 0.952)/2 = 0.786.
func TestSignedRankCIMatchesR(t *testing.T) {
	x := []float64{1.83, 0.50, 1.62, 2.48, 1.68, 1.88, 1.55, 3.06, 1.30}
	y := []float64{0.878, 0.647, 0.598, 2.05, 1.06, 1.29, 1.06, 3.14, 1.29}
	d := make([]float64, len(x))
	for i := range x {
		d[i] = x[i] - y[i]
	}
	s := SignedRankCI(d, 0.025)
	for _, c := range []struct {
		name      string
		got, want float64
	}{{"estimate", s.Est, 0.46}, {"low", s.Lo, 0.01}, {"high", s.Hi, 0.786}} {
		if math.Abs(c.got-c.want) > 1e-9 {
			t.Errorf("%s = %v, want %v", c.name, c.got, c.want)
		}
	}
	// Five differences cannot give a 95% interval (2^-5 > 0.025); six can.
	if s := SignedRankCI([]float64{1, 2, 3, 4, 5}, 0.025); s.HasCI() {
		t.Errorf("5 differences: interval %v…%v, want none", s.Lo, s.Hi)
	}
	if s := SignedRankCI([]float64{1, 2, 3, 4, 5, 6}, 0.025); !s.HasCI() || s.Lo != 1 || s.Hi != 6 {
		t.Errorf("6 differences: interval %v…%v, want 1…6 (the extreme Walsh averages)", s.Lo, s.Hi)
	}
}
