package keydist

import (
	"errors"
	"math"
	"slices"
	"testing"
)

// chiSquare tests observed counts of keys lo..lo+len(obs)-1 against d's
// probabilities: bins expecting fewer than 5 draws are pooled into one,
// and the statistic is held against the critical value at p = 0.001
// (Wilson–Hilferty's approximation). Seeded draws make it deterministic;
// the margin makes it robust to a change of seed.
func chiSquare(t *testing.T, d *Dist, obs []int64, draws int64) (stat, crit float64) {
	t.Helper()
	var poolObs, poolExp float64
	bins := 0
	for i, o := range obs {
		e := d.Prob(d.Min()+int64(i)) * float64(draws)
		if e < 5 {
			poolObs, poolExp = poolObs+float64(o), poolExp+e
			continue
		}
		stat += (float64(o) - e) * (float64(o) - e) / e
		bins++
	}
	if poolExp > 0 {
		stat += (poolObs - poolExp) * (poolObs - poolExp) / poolExp
		bins++
	}
	df := float64(bins - 1)
	const z = 3.0902 // the standard normal's 0.999 quantile
	crit = df * math.Pow(1-2/(9*df)+z*math.Sqrt(2/(9*df)), 3)
	return stat, crit
}

func draw(d *Dist, seed uint64, n int64) []int64 {
	obs := make([]int64, d.Keys())
	src := d.Source(seed, 7)
	for range n {
		obs[src.Key()-d.Min()]++
	}
	return obs
}

func mustNew(t *testing.T, s string, lo, hi int64) *Dist {
	t.Helper()
	sp, err := Parse(s)
	if err != nil {
		t.Fatal(err)
	}
	d, err := New(sp, lo, hi)
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// TestDistChiSquare: every generator's draws fit its own probabilities,
// Zipf exponents below, at and above 1 included, over key spaces that do
// not start at 0.
func TestDistChiSquare(t *testing.T) {
	const draws = 200_000
	for _, tc := range []struct {
		spec   string
		lo, hi int64
	}{
		{"uniform", 0, 999},
		{"zipf:0.5", 0, 999},
		{"zipf:0.99", 0, 999},
		{"zipf", 100, 1099}, // exponent 1: the formulas' special case
		{"zipf:1.01", 0, 999},
		{"zipf:1.5", 0, 999},
		{"zipf:3", 0, 99},
		{"zipf:0.99", 5, 6}, // two keys
		{"gaussian", 0, 999},
		{"gaussian:900,150", 1, 1000}, // cut by the top of the key space
		{"gaussian:500,3", 0, 999},    // narrow: a few keys
	} {
		t.Run(tc.spec, func(t *testing.T) {
			d := mustNew(t, tc.spec, tc.lo, tc.hi)
			sum := 0.0
			for k := tc.lo; k <= tc.hi; k++ {
				sum += d.Prob(k)
			}
			if math.Abs(sum-1) > 1e-9 {
				t.Fatalf("probabilities sum to %v", sum)
			}
			stat, crit := chiSquare(t, d, draw(d, 1, draws), draws)
			t.Logf("chi-square %.1f, critical %.1f", stat, crit)
			if stat > crit {
				t.Errorf("chi-square %.1f over the critical %.1f (p = 0.001): draws do not follow %s", stat, crit, tc.spec)
			}
		})
	}
}

// TestDistChiSquareTellsApart: the test above can fail. Draws of Zipf
// 0.99 held against Zipf 1.0's probabilities, or a Gaussian against
// another stddev, are rejected at the same sample size.
func TestDistChiSquareTellsApart(t *testing.T) {
	const draws = 200_000
	for _, tc := range []struct{ drawn, held string }{
		{"zipf:0.99", "zipf:1.03"},
		{"zipf:0.5", "uniform"},
		{"gaussian:500,100", "gaussian:500,104"},
	} {
		got := draw(mustNew(t, tc.drawn, 0, 999), 1, draws)
		stat, crit := chiSquare(t, mustNew(t, tc.held, 0, 999), got, draws)
		t.Logf("%s held as %s: chi-square %.1f, critical %.1f", tc.drawn, tc.held, stat, crit)
		if stat <= crit {
			t.Errorf("draws of %s pass as %s: chi-square %.1f ≤ %.1f", tc.drawn, tc.held, stat, crit)
		}
	}
}

// TestZipfHotShareLargeKeySpace: over 10^10 keys (too many to sum), the
// top 1% takes the share H(10^8, s)/H(10^10, s) computed by Euler–Maclaurin,
// within 0.5 percentage points, and the hottest keys their probabilities.
func TestZipfHotShareLargeKeySpace(t *testing.T) {
	const draws = 400_000
	for _, s := range []string{"zipf:0.99", "zipf:0.7", "zipf:1.2"} {
		d := mustNew(t, s, 0, 1e10-1)
		src := d.Source(3, 1)
		var hot, first [3]int64
		for range draws {
			k := src.Key()
			if d.Hot(k) {
				hot[0]++
			}
			if k < 3 {
				first[k]++
			}
		}
		got, want := float64(hot[0])/draws, d.HotShare()
		t.Logf("%s: top 1%% share %.4f, expected %.4f", s, got, want)
		if math.Abs(got-want) > 0.005 {
			t.Errorf("%s: top 1%% of 10^10 keys took %.4f of the draws, want %.4f", s, got, want)
		}
		for k, n := range first {
			p := d.Prob(int64(k))
			if sd := math.Sqrt(p * (1 - p) / draws); math.Abs(float64(n)/draws-p) > 5*sd {
				t.Errorf("%s: key %d drawn %.5f, want %.5f ± %.5f", s, k, float64(n)/draws, p, 5*sd)
			}
		}
	}
}

// TestHarmonic: the Euler–Maclaurin tail agrees with the plain sum.
func TestHarmonic(t *testing.T) {
	for _, s := range []float64{0.3, 0.99, 1, 1.5} {
		for _, m := range []int64{1, 999, 1000, 1001, 50_000} {
			sum := 0.0
			for k := m; k >= 1; k-- {
				sum += math.Pow(float64(k), -s)
			}
			if got := harmonic(m, s); math.Abs(got-sum) > 1e-9*sum {
				t.Errorf("H(%d, %g) = %.12g, summed %.12g", m, s, got, sum)
			}
		}
	}
}

// TestHotShareSmall: the expected hot share is the sum of the hot keys'
// probabilities, and matches the draws.
func TestHotShareSmall(t *testing.T) {
	const draws = 200_000
	for _, s := range []string{"zipf:0.99", "gaussian", "gaussian:10,40"} {
		d := mustNew(t, s, 0, 9999)
		want, hot := 0.0, int64(0)
		for k := range int64(10000) {
			if d.Hot(k) {
				want += d.Prob(k)
				hot++
			}
		}
		if hot != 100 || d.HotKeys() != 100 || math.Abs(d.HotShare()-want) > 1e-9 {
			t.Fatalf("%s: %d hot keys (HotKeys %d), share %v, summed %v", s, hot, d.HotKeys(), d.HotShare(), want)
		}
		obs := draw(d, 2, draws)
		n := int64(0)
		for i, o := range obs {
			if d.Hot(int64(i)) {
				n += o
			}
		}
		if got := float64(n) / draws; math.Abs(got-want) > 0.005 {
			t.Errorf("%s: hot keys drew %.4f, want %.4f", s, got, want)
		}
	}
	if d := mustNew(t, "uniform", 0, 99); d.HotKeys() != 0 || d.Hot(0) || d.HotShare() != 0 {
		t.Errorf("uniform keys have hot keys")
	}
}

// TestSequentialAndSeeds: sequential keys walk the key space and wrap;
// a source's sequence is fixed by its seed and stream, and another seed
// or stream gives another.
func TestSequentialAndSeeds(t *testing.T) {
	d := mustNew(t, "S", 10, 13)
	src := d.Source(1, 1)
	var got []int64
	for range 6 {
		got = append(got, src.Key())
	}
	if want := []int64{10, 11, 12, 13, 10, 11}; !slices.Equal(got, want) {
		t.Errorf("sequential: %v, want %v", got, want)
	}
	for _, spec := range []string{"uniform", "zipf:0.99", "gaussian"} {
		d := mustNew(t, spec, 0, 1<<20)
		seq := func(seed, stream uint64) []int64 {
			src := d.Source(seed, stream)
			out := make([]int64, 50)
			for i := range out {
				out[i] = src.Key()
			}
			return out
		}
		a := seq(1, 1)
		if !slices.Equal(a, seq(1, 1)) || slices.Equal(a, seq(2, 1)) || slices.Equal(a, seq(1, 2)) {
			t.Errorf("%s: the sequence is not fixed by (seed, stream)", spec)
		}
	}
}

// TestParallelSlices: parallel keys (memtier's P) give each worker its own
// slice, in order and wrapping; the slices cover the key space once,
// uneven sizes differing by one key; more workers than keys is refused.
func TestParallelSlices(t *testing.T) {
	d := mustNew(t, "P", 10, 19) // 10 keys
	seen := map[int64]int{}
	var lens []int64
	for w := range 3 {
		src, err := d.WorkerSource(1, w, 3)
		if err != nil {
			t.Fatal(err)
		}
		first := src.Key()
		seen[first]++
		n := int64(1)
		for k := src.Key(); k != first; k = src.Key() {
			if k != first+n {
				t.Fatalf("worker %d: key %d after %d keys from %d: not in order", w, k, n, first)
			}
			seen[k]++
			n++
		}
		lens = append(lens, n)
	}
	if len(seen) != 10 || !slices.Equal(lens, []int64{3, 3, 4}) {
		t.Errorf("slices %v cover %d keys %v, want 3, 3, 4 covering 10..19 once", lens, len(seen), seen)
	}
	for k, n := range seen {
		if n != 1 || k < 10 || k > 19 {
			t.Errorf("key %d walked by %d workers", k, n)
		}
	}
	if _, err := d.WorkerSource(1, 0, 11); !errors.Is(err, ErrSpec) {
		t.Errorf("11 workers on 10 parallel keys: %v, want ErrSpec", err)
	}
	// Other patterns ignore the slicing: worker w's source is Source(seed, w).
	u := mustNew(t, "zipf:0.99", 0, 1000)
	a, _ := u.WorkerSource(7, 2, 3)
	b := u.Source(7, 2)
	for range 20 {
		if a.Key() != b.Key() {
			t.Fatal("WorkerSource of zipf keys is not Source(seed, worker)")
		}
	}
}

func TestParse(t *testing.T) {
	for in, want := range map[string]string{
		"uniform": "uniform", "R": "uniform", "S": "sequential", "Z": "zipf:1", "zipf:0.99": "zipf:0.99",
		"G": "gaussian", "gaussian:10,2.5": "gaussian:10,2.5", "P": "parallel", "parallel": "parallel",
	} {
		sp, err := Parse(in)
		if err != nil {
			t.Errorf("%q: %v", in, err)
			continue
		}
		if sp.String() != want {
			t.Errorf("%q reads as %q, want %q", in, sp.String(), want)
		}
		if back, err := Parse(sp.String()); err != nil || back.String() != want {
			t.Errorf("%q does not read back: %v %v", sp.String(), back, err)
		}
	}
	for _, bad := range []string{"", "pareto", "zipf:x", "zipf:0", "zipf:-1", "uniform:3", "gaussian:1", "gaussian:a,b", "parallel:2"} {
		if _, err := Parse(bad); !errors.Is(err, ErrSpec) {
			t.Errorf("%q: error %v, want ErrSpec", bad, err)
		}
	}
	for _, tc := range []struct {
		spec   string
		lo, hi int64
	}{{"zipf:5", 0, 9}, {"gaussian:20,1", 0, 9}, {"uniform", 5, 4}, {"uniform", -1, 4}} {
		sp, err := Parse(tc.spec)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := New(sp, tc.lo, tc.hi); !errors.Is(err, ErrSpec) {
			t.Errorf("%s over %d..%d: error %v, want ErrSpec", tc.spec, tc.lo, tc.hi, err)
		}
	}
}
