package stats

import (
	"math"
	"math/rand/v2"
	"slices"
	"sync"
)

// Power is the chance of catching an effect of the minimum detectable
// size: the usual 80%.
const Power = 0.8

// mdeSims is how many simulated runs estimate one power figure; with
// common random numbers across the search the figure moves smoothly, and
// its standard error at 80% power is about 0.6 points.
const mdeSims = 4000

// mdeSeed makes every MDE figure reproducible: the same n and level give
// the same number in every report.
const mdeSeed = 0x3d3

// MDE is the minimum detectable shift, in units of the noise's standard
// deviation: the smallest true shift that a one-sided Mann-Whitney test at
// level alpha, on n1 and n2 trials, detects with probability power when
// the noise is normal (on log values: lognormal trials). It counts the
// test's discreteness (few trials can only reach some levels), which a
// formula such as Noether's does not; +Inf when n1+n2 trials cannot reach
// alpha at all. Multiply by the run's standard deviation for the MDE in
// the metric's (log) units.
//
// It is estimated by simulation with a fixed seed, so it is the same for
// the same arguments every time.
func MDE(n1, n2 int, alpha, power float64) float64 {
	key := mdeKey{n1, n2, alpha, power}
	mdeMu.Lock()
	v, ok := mdeCache[key]
	mdeMu.Unlock()
	if ok {
		return v
	}
	v = mde(n1, n2, alpha, power)
	mdeMu.Lock()
	mdeCache[key] = v
	mdeMu.Unlock()
	return v
}

type mdeKey struct {
	n1, n2       int
	alpha, power float64
}

var (
	mdeMu    sync.Mutex
	mdeCache = map[mdeKey]float64{}
)

func mde(n1, n2 int, alpha, power float64) float64 {
	c := uCritical(n1, n2, alpha)
	if c < 0 || power <= 0 || power >= 1 {
		return math.Inf(1)
	}
	rng := rand.New(rand.NewPCG(mdeSeed, uint64(n1)<<32|uint64(n2)))
	xs, ys := make([][]float64, mdeSims), make([][]float64, mdeSims)
	draw := func(n int) []float64 {
		s := make([]float64, n)
		for i := range s {
			s[i] = rng.NormFloat64()
		}
		slices.Sort(s)
		return s
	}
	for i := range xs {
		xs[i], ys[i] = draw(n1), draw(n2)
	}
	// Power at shift d: the share of simulated runs where ys+d beat xs
	// clearly enough (U ≤ c, U counting pairs with x > y+d). A shift keeps
	// ys sorted, so U is one merge per run.
	powerAt := func(d float64) float64 {
		hits := 0
		for i := range xs {
			if belowCount(xs[i], ys[i], d) <= c {
				hits++
			}
		}
		return float64(hits) / float64(len(xs))
	}
	lo, hi := 0.0, 1.0
	for powerAt(hi) < power {
		lo, hi = hi, 2*hi
		if hi > 1e3 {
			return math.Inf(1)
		}
	}
	for range 40 {
		mid := (lo + hi) / 2
		if powerAt(mid) >= power {
			hi = mid
		} else {
			lo = mid
		}
	}
	return hi
}

// belowCount is the number of pairs with x > y+d, for sorted xs and ys.
func belowCount(xs, ys []float64, d float64) int {
	n, j := 0, 0
	for _, x := range xs {
		for j < len(ys) && ys[j]+d < x {
			j++
		}
		n += j
	}
	return n
}

// PooledSD is the pooled standard deviation of two samples (each around
// its own mean), the noise a shift is measured against; NaN with fewer
// than two values on a side.
func PooledSD(xs, ys []float64) float64 {
	if len(xs) < 2 || len(ys) < 2 {
		return math.NaN()
	}
	return math.Sqrt((sumSquares(xs) + sumSquares(ys)) / float64(len(xs)+len(ys)-2))
}

// SD is the sample standard deviation of xs; NaN with fewer than two.
func SD(xs []float64) float64 {
	if len(xs) < 2 {
		return math.NaN()
	}
	return math.Sqrt(sumSquares(xs) / float64(len(xs)-1))
}

// sumSquares is the sum of squared deviations from the mean.
func sumSquares(s []float64) float64 {
	var m float64
	for _, x := range s {
		m += x
	}
	m /= float64(len(s))
	var v float64
	for _, x := range s {
		v += (x - m) * (x - m)
	}
	return v
}
