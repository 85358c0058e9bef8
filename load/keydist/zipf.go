package keydist

import (
	"math"
	"math/rand/v2"
)

// zipf draws ranks 1..n with P(k) ∝ k^-s, for any s > 0, by
// rejection-inversion: W. Hörmann and G. Derflinger, "Rejection-inversion
// to generate variates from monotone discrete distributions", ACM TOMACS
// 6(3), 1996 — the method of Apache Commons' RejectionInversionZipfSampler
// and, for s > 1 only, of Go's math/rand Zipf. It is exact and O(1) to set
// up and to draw (about 1.1 uniforms a draw).
//
// Not Gray et al.'s method ("Quickly generating billion-record synthetic
// databases", SIGMOD 1994), which YCSB and memtier_benchmark use: it sums
// ζ(n, s) over the whole key space to set up (O(n): minutes for 10^10
// keys) and is exact only for the two hottest ranks, an approximation of
// the continuous distribution below them.
type zipf struct {
	s, n    float64
	hX1     float64 // H(1.5) - h(1)
	hN      float64 // H(n + 0.5)
	squeeze float64 // accept at once when k - x ≤ squeeze
}

func newZipf(s float64, n int64) *zipf {
	z := &zipf{s: s, n: float64(n)}
	z.hX1 = z.hIntegral(1.5) - 1
	z.hN = z.hIntegral(z.n + 0.5)
	z.squeeze = 2 - z.hIntegralInverse(z.hIntegral(2.5)-z.h(2))
	return z
}

// rank draws a rank in 1..n (1 the most frequent).
func (z *zipf) rank(r *rand.Rand) int64 {
	if z.n == 1 {
		return 1
	}
	for {
		// u is uniform on (hX1, hN]: the area under the hat function.
		u := z.hN + r.Float64()*(z.hX1-z.hN)
		x := z.hIntegralInverse(u)
		k := math.Floor(x + 0.5)
		k = min(max(k, 1), z.n)
		if k-x <= z.squeeze || u >= z.hIntegral(k+0.5)-z.h(k) {
			return int64(k)
		}
	}
}

// h is the unnormalized probability x^-s.
func (z *zipf) h(x float64) float64 { return math.Exp(-z.s * math.Log(x)) }

// hIntegral is H(x) = ∫_1^x t^-s dt = (x^(1-s) - 1) / (1 - s), log x at
// s = 1, written so that it stays accurate as s approaches 1.
func (z *zipf) hIntegral(x float64) float64 {
	lx := math.Log(x)
	return expm1Over((1-z.s)*lx) * lx
}

// hIntegralInverse is H's inverse.
func (z *zipf) hIntegralInverse(x float64) float64 {
	t := x * (1 - z.s)
	if t < -1 {
		t = -1 // rounding at the lower end of the range
	}
	return math.Exp(log1pOver(t) * x)
}

// log1pOver is log(1+x)/x, 1 at x = 0.
func log1pOver(x float64) float64 {
	if math.Abs(x) > 1e-8 {
		return math.Log1p(x) / x
	}
	return 1 - x*(0.5-x*(1.0/3-0.25*x))
}

// expm1Over is (e^x - 1)/x, 1 at x = 0.
func expm1Over(x float64) float64 {
	if math.Abs(x) > 1e-8 {
		return math.Expm1(x) / x
	}
	return 1 + x*0.5*(1+x/3*(1+0.25*x))
}

// harmonic is the generalized harmonic number H(m, s) = Σ_{k=1}^m k^-s:
// summed exactly up to eulerFrom terms, then by the Euler–Maclaurin
// formula (integral, end corrections and the first derivative term),
// whose error past 1000 terms is far below a float64's precision here.
func harmonic(m int64, s float64) float64 {
	const eulerFrom = 1000
	sum := 0.0
	top := min(m, eulerFrom)
	for k := top; k >= 1; k-- { // smallest first
		sum += math.Pow(float64(k), -s)
	}
	if m <= eulerFrom {
		return sum
	}
	a, b := float64(eulerFrom), float64(m)
	f := func(x float64) float64 { return math.Pow(x, -s) }
	df := func(x float64) float64 { return -s * math.Pow(x, -s-1) }
	var integral float64
	if s == 1 {
		integral = math.Log(b / a)
	} else {
		integral = (math.Pow(b, 1-s) - math.Pow(a, 1-s)) / (1 - s)
	}
	// Σ_{k=a}^{b} f(k) ≈ ∫_a^b f + (f(a)+f(b))/2 + (f'(b)-f'(a))/12; a is
	// already in sum.
	return sum - f(a) + integral + (f(a)+f(b))/2 + (df(b)-df(a))/12
}
