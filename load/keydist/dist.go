package keydist

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"strconv"
	"strings"
)

// ErrSpec reports a distribution or size list that cannot be used.
var ErrSpec = errors.New("keydist: bad spec")

// Pattern is a key distribution's shape.
type Pattern string

// The key patterns, with memtier_benchmark's letters (--key-pattern).
const (
	Uniform    Pattern = "uniform"    // R: every key equally likely
	Sequential Pattern = "sequential" // S: min, min+1, .., max, min, .. per worker
	Gaussian   Pattern = "gaussian"   // G: normal about a median, redrawn outside the key space
	Zipf       Pattern = "zipf"       // Z: P(rank k) ∝ k^-s, the lowest key the most frequent
	// Parallel is P: sequential, each worker over its own slice of the
	// key space (memtier's P:P fills a key space once with -n allkeys).
	Parallel Pattern = "parallel"
)

// DefaultZipfExp is memtier_benchmark's --key-zipf-exp default. YCSB's
// "zipfian" is 0.99.
const DefaultZipfExp = 1.0

// MaxZipfExp bounds the exponent as memtier_benchmark does, (0, 5):
// past 5 the hottest key takes over 96% of the traffic.
const MaxZipfExp = 5.0

// HotFraction is the share of the key space counted as hot keys: the
// 1% the distribution makes the most likely.
const HotFraction = 0.01

// Spec is a key distribution as the user gives it.
type Spec struct {
	Pattern Pattern `json:"pattern"`
	// Exp is Zipf's exponent s (DefaultZipfExp when 0).
	Exp float64 `json:"zipf_exp,omitempty"`
	// Median and Stddev shape the Gaussian, in key numbers: nil is the
	// centre of the key space, 0 a sixth of its width (memtier's
	// --key-median and --key-stddev defaults).
	Median *float64 `json:"median,omitempty"`
	Stddev float64  `json:"stddev,omitempty"`
}

// Parse reads a distribution: uniform, sequential, parallel, gaussian,
// gaussian:MEDIAN,STDDEV, zipf or zipf:EXP; memtier_benchmark's letters
// R, S, P, G and Z stand for the names.
func Parse(s string) (Spec, error) {
	name, arg, hasArg := strings.Cut(s, ":")
	var sp Spec
	switch strings.ToLower(name) {
	case "uniform", "r", "random":
		sp.Pattern = Uniform
	case "sequential", "s":
		sp.Pattern = Sequential
	case "parallel", "p":
		sp.Pattern = Parallel
	case "gaussian", "g", "normal":
		sp.Pattern = Gaussian
		if hasArg {
			m, sd, ok := strings.Cut(arg, ",")
			med, err1 := strconv.ParseFloat(m, 64)
			std, err2 := strconv.ParseFloat(sd, 64)
			if !ok || err1 != nil || err2 != nil {
				return Spec{}, fmt.Errorf("%w: %q: want gaussian:MEDIAN,STDDEV (key numbers)", ErrSpec, s)
			}
			sp.Median, sp.Stddev = &med, std
		}
	case "zipf", "z", "zipfian":
		sp.Pattern = Zipf
		if hasArg {
			e, err := strconv.ParseFloat(arg, 64)
			if err != nil || !(e > 0) {
				return Spec{}, fmt.Errorf("%w: %q: want zipf:EXPONENT, e.g. zipf:0.99", ErrSpec, s)
			}
			sp.Exp = e
		}
	default:
		return Spec{}, fmt.Errorf("%w: key distribution %q: want uniform, sequential, parallel, gaussian[:MEDIAN,STDDEV] or zipf[:EXP] (memtier's R, S, P, G, Z)", ErrSpec, s)
	}
	if hasArg && (sp.Pattern == Uniform || sp.Pattern == Sequential || sp.Pattern == Parallel) {
		return Spec{}, fmt.Errorf("%w: %q: %s takes no parameter", ErrSpec, s, sp.Pattern)
	}
	return sp, nil
}

// String is the spec as Parse reads it, parameters given.
func (s Spec) String() string {
	switch s.Pattern {
	case Zipf:
		return "zipf:" + strconv.FormatFloat(s.exp(), 'g', -1, 64)
	case Gaussian:
		if s.Median == nil && s.Stddev == 0 {
			return "gaussian"
		}
		m := "centre"
		if s.Median != nil {
			m = strconv.FormatFloat(*s.Median, 'g', -1, 64)
		}
		return "gaussian:" + m + "," + strconv.FormatFloat(s.Stddev, 'g', -1, 64)
	case "":
		return string(Uniform)
	}
	return string(s.Pattern)
}

func (s Spec) exp() float64 {
	if s.Exp == 0 {
		return DefaultZipfExp
	}
	return s.Exp
}

// Dist is a key distribution over the key space [min, max], immutable and
// safe for concurrent use; each worker draws from a Source of its own.
type Dist struct {
	spec     Spec
	min, n   int64
	z        *zipf
	mu, sd   float64 // Gaussian, in key numbers
	hot      int64   // how many keys are hot
	hotLo    int64   // Gaussian: the hot keys are [hotLo, hotLo+hot)
	norm     float64 // Gaussian: the mass of the key space
	harmonic float64 // Zipf: H(n, s), computed on first use
}

// New checks s against the key space [min, max].
func New(s Spec, lo, hi int64) (*Dist, error) {
	if s.Pattern == "" {
		s.Pattern = Uniform
	}
	if lo < 0 || hi < lo {
		return nil, fmt.Errorf("%w: key space %d..%d", ErrSpec, lo, hi)
	}
	d := &Dist{spec: s, min: lo, n: hi - lo + 1}
	d.hot = max(1, int64(math.Round(float64(d.n)*HotFraction)))
	switch s.Pattern {
	case Uniform, Sequential, Parallel:
		d.hot = 0 // no key is likelier than another
	case Zipf:
		e := s.exp()
		if !(e > 0 && e < MaxZipfExp) {
			return nil, fmt.Errorf("%w: zipf exponent %g: want 0 < s < %g (memtier's bounds)", ErrSpec, e, MaxZipfExp)
		}
		d.spec.Exp = e
		d.z = newZipf(e, d.n)
		d.harmonic = harmonic(d.n, e)
	case Gaussian:
		d.mu = float64(lo) + float64(d.n-1)/2
		if s.Median != nil {
			d.mu = *s.Median
		}
		d.sd = s.Stddev
		if d.sd == 0 {
			d.sd = float64(d.n) / 6
		}
		if !(d.mu >= float64(lo) && d.mu <= float64(hi)) || !(d.sd > 0) || math.IsInf(d.sd, 0) {
			return nil, fmt.Errorf("%w: gaussian median %g, stddev %g: want a median in the key space %d..%d and a stddev > 0", ErrSpec, d.mu, d.sd, lo, hi)
		}
		d.norm = d.cdf(float64(hi)+0.5) - d.cdf(float64(lo)-0.5)
		if d.norm < 1e-9 {
			return nil, fmt.Errorf("%w: gaussian stddev %g: too narrow to draw from", ErrSpec, d.sd)
		}
		// The hot keys are the most likely: those nearest the median.
		d.hotLo = int64(math.Round(d.mu - float64(d.hot-1)/2))
		d.hotLo = min(max(d.hotLo, lo), hi-d.hot+1)
	default:
		return nil, fmt.Errorf("%w: key pattern %q", ErrSpec, s.Pattern)
	}
	return d, nil
}

// Spec is the distribution with its defaults filled.
func (d *Dist) Spec() Spec { return d.spec }

// Keys is the size of the key space.
func (d *Dist) Keys() int64 { return d.n }

// Min is the lowest key.
func (d *Dist) Min() int64 { return d.min }

// Source returns a stream of draws seeded by (seed, stream): a worker's
// own, the same sequence for the same pair on every run. A parallel
// distribution's source walks the whole key space: see WorkerSource.
func (d *Dist) Source(seed, stream uint64) *Source {
	return &Source{d: d, r: rand.New(rand.NewPCG(seed, stream)), lo: d.min, n: d.n}
}

// WorkerSource is worker's Source (0 ≤ worker < workers) seeded by (seed,
// worker). For the parallel pattern it walks only the worker's slice of
// the key space, the slices splitting it evenly; for the others it is
// Source(seed, worker). More workers than keys is an error for parallel
// keys: a worker would have no key.
func (d *Dist) WorkerSource(seed uint64, worker, workers int) (*Source, error) {
	s := d.Source(seed, uint64(worker))
	if d.spec.Pattern != Parallel {
		return s, nil
	}
	if workers < 1 || worker < 0 || worker >= workers {
		return nil, fmt.Errorf("%w: worker %d of %d", ErrSpec, worker, workers)
	}
	if int64(workers) > d.n {
		return nil, fmt.Errorf("%w: parallel keys: %d workers for %d keys (each worker needs a key of its own)", ErrSpec, workers, d.n)
	}
	w, n := int64(worker), int64(workers)
	s.lo = d.min + d.n*w/n
	s.n = d.min + d.n*(w+1)/n - s.lo
	return s, nil
}

// Prob is the expected share of draws that pick key k.
func (d *Dist) Prob(k int64) float64 {
	if k < d.min || k >= d.min+d.n {
		return 0
	}
	switch d.spec.Pattern {
	case Zipf:
		return math.Pow(float64(k-d.min+1), -d.spec.Exp) / d.harmonic
	case Gaussian:
		return (d.cdf(float64(k)+0.5) - d.cdf(float64(k)-0.5)) / d.norm
	}
	return 1 / float64(d.n) // uniform, and sequential or parallel over a whole lap
}

// Hot reports whether key k is one of the hot keys: the HotFraction of
// the key space the distribution makes the most likely (none for uniform
// and sequential keys).
func (d *Dist) Hot(k int64) bool {
	switch d.spec.Pattern {
	case Zipf:
		return k >= d.min && k < d.min+d.hot
	case Gaussian:
		return k >= d.hotLo && k < d.hotLo+d.hot
	}
	return false
}

// HotKeys is how many keys are hot (0 for uniform and sequential keys).
func (d *Dist) HotKeys() int64 { return d.hot }

// HotShare is the expected share of draws on the hot keys.
func (d *Dist) HotShare() float64 {
	switch d.spec.Pattern {
	case Zipf:
		return harmonic(d.hot, d.spec.Exp) / d.harmonic
	case Gaussian:
		return (d.cdf(float64(d.hotLo+d.hot)-0.5) - d.cdf(float64(d.hotLo)-0.5)) / d.norm
	}
	return 0
}

func (d *Dist) cdf(x float64) float64 {
	return 0.5 * math.Erfc(-(x-d.mu)/(d.sd*math.Sqrt2))
}

// Source is one worker's stream of draws. Not safe for concurrent use.
type Source struct {
	d   *Dist
	r   *rand.Rand
	seq int64
	// lo and n are the keys a sequential or parallel source walks.
	lo, n int64
}

// Rand is the source's generator, for the worker's other draws (which
// operation, which size): one stream, so one seed fixes them all.
func (s *Source) Rand() *rand.Rand { return s.r }

// Key draws the next key.
func (s *Source) Key() int64 {
	d := s.d
	switch d.spec.Pattern {
	case Sequential, Parallel:
		k := s.lo + s.seq
		if s.seq++; s.seq == s.n {
			s.seq = 0
		}
		return k
	case Zipf:
		return d.min + d.z.rank(s.r) - 1
	case Gaussian:
		lo, hi := float64(d.min)-0.5, float64(d.min+d.n)-0.5
		for {
			x := d.mu + d.sd*s.r.NormFloat64()
			if x >= lo && x < hi {
				return int64(math.Floor(x + 0.5))
			}
		}
	}
	return d.min + s.r.Int64N(d.n)
}
