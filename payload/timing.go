package payload

import (
	"runtime"
	"slices"
	"time"

	"github.com/wirebench/wirebench/results"
)

// timeLoop times pass, one pass over every sample, as testing.B does: a
// calibration pass, then batches of loops sized so that the batches
// together take about budget. The figure is the median batch; the range
// is the fastest and the slowest batch, so a noisy machine shows as a
// wide range rather than a wrong number. Allocations are counted from
// runtime.MemStats around each batch (the lab runs nothing else then).
func timeLoop(budget time.Duration, batches, msgs int, pass func() error) (results.PayloadCPU, error) {
	if msgs == 0 {
		return results.PayloadCPU{}, nil
	}
	t, err := newTimed(budget, batches, pass)
	if err != nil {
		return results.PayloadCPU{}, err
	}
	runtime.GC()
	for range batches {
		if err := t.batch(); err != nil {
			return results.PayloadCPU{}, err
		}
	}
	return t.result(msgs), nil
}

// timePair times two codecs on the same samples, a (wirebench's) and b
// (the library's own calls), each given a sample's index, interleaved as
// finely as a clock allows: a unit is one sample repeated for ~20 µs, and
// each sample's unit of a and of b run back to back, in turns (a b, b a,
// …), so that whatever else the machine runs — another process taking the
// CPU, a GC the other's garbage set off — falls on both alike. A batch
// sweeps every sample as often as its share of 2×budget allows; a side's
// figure per batch is the mean over the samples of its time per message,
// the median batch and range as timeLoop's. ratio is the median over the
// units of a's time over b's, which a preempted unit cannot move.
func timePair(budget time.Duration, batches, n int, a, b func(i int) error) (ca, cb results.PayloadCPU, ratio float64, err error) {
	if n == 0 {
		return ca, cb, 0, nil
	}
	reps := make([]int, n)
	var sweep time.Duration
	for i := range n {
		t := time.Duration(0)
		for _, f := range []func(int) error{a, b} {
			t0 := time.Now()
			if err := f(i); err != nil {
				return ca, cb, 0, err
			}
			t = max(t, time.Since(t0))
		}
		t = max(t, 50*time.Nanosecond)
		reps[i] = max(1, int(pairUnit/t))
		sweep += 2 * t * time.Duration(reps[i])
	}
	sweeps := max(1, int(2*budget/time.Duration(batches)/max(sweep, time.Microsecond)))
	unit := func(f func(int) error, i int) (float64, error) {
		t0 := time.Now()
		for range reps[i] {
			if err := f(i); err != nil {
				return 0, err
			}
		}
		return float64(time.Since(t0).Nanoseconds()) / float64(reps[i]), nil
	}
	var nsA, nsB, ratios []float64
	for range batches {
		runtime.GC()
		var sumA, sumB float64
		for s := range sweeps {
			for i := range n {
				first, second := a, b
				swap := (i+s)%2 == 1
				if swap {
					first, second = b, a
				}
				d1, err := unit(first, i)
				if err != nil {
					return ca, cb, 0, err
				}
				d2, err := unit(second, i)
				if err != nil {
					return ca, cb, 0, err
				}
				if swap {
					d1, d2 = d2, d1
				}
				sumA += d1
				sumB += d2
				if d2 > 0 {
					ratios = append(ratios, d1/d2)
				}
			}
		}
		nsA = append(nsA, sumA/float64(sweeps*n))
		nsB = append(nsB, sumB/float64(sweeps*n))
	}
	side := func(ns []float64, f func(int) error) (results.PayloadCPU, error) {
		// Allocations apart, over a few sweeps: the interleaved batches
		// count both sides at once.
		const allocSweeps = 3
		var ms0, ms1 runtime.MemStats
		runtime.ReadMemStats(&ms0)
		for range allocSweeps {
			for i := range n {
				if err := f(i); err != nil {
					return results.PayloadCPU{}, err
				}
			}
		}
		runtime.ReadMemStats(&ms1)
		m := float64(allocSweeps * n)
		slices.Sort(ns)
		return results.PayloadCPU{Ns: median(ns), NsMin: ns[0], NsMax: ns[len(ns)-1],
			Allocs: float64(ms1.Mallocs-ms0.Mallocs) / m, Bytes: float64(ms1.TotalAlloc-ms0.TotalAlloc) / m,
			Batches: batches, Loops: sweeps}, nil
	}
	if ca, err = side(nsA, a); err != nil {
		return ca, cb, 0, err
	}
	if cb, err = side(nsB, b); err != nil {
		return ca, cb, 0, err
	}
	slices.Sort(ratios)
	return ca, cb, median(ratios), nil
}

// pairUnit is the time of one unit of timePair: long against the clock's
// cost (~50 ns a reading), short against a scheduler's time slice.
const pairUnit = 20 * time.Microsecond

// timed is one timed loop: its pass, how many passes a batch runs, and
// what the batches measured so far.
type timed struct {
	pass          func() error
	batches       int
	loops         int
	ns            []float64 // per pass, one per batch
	allocs, bytes uint64
}

// newTimed runs pass once to size a batch: batches of loops passes take
// about budget together.
func newTimed(budget time.Duration, batches int, pass func() error) (*timed, error) {
	t0 := time.Now()
	if err := pass(); err != nil {
		return nil, err
	}
	one := max(time.Since(t0), time.Microsecond)
	per := budget / time.Duration(batches)
	return &timed{pass: pass, batches: batches, loops: int(max(1, per/one))}, nil
}

func (t *timed) batch() error {
	var ms0, ms1 runtime.MemStats
	runtime.ReadMemStats(&ms0)
	start := time.Now()
	for range t.loops {
		if err := t.pass(); err != nil {
			return err
		}
	}
	d := time.Since(start)
	runtime.ReadMemStats(&ms1)
	t.allocs += ms1.Mallocs - ms0.Mallocs
	t.bytes += ms1.TotalAlloc - ms0.TotalAlloc
	t.ns = append(t.ns, float64(d.Nanoseconds())/float64(t.loops))
	return nil
}

// result is per message over msgs messages a pass.
func (t *timed) result(msgs int) results.PayloadCPU {
	ns := make([]float64, len(t.ns))
	for i, x := range t.ns {
		ns[i] = x / float64(msgs)
	}
	slices.Sort(ns)
	n := float64(len(t.ns) * t.loops * msgs)
	return results.PayloadCPU{
		Ns: median(ns), NsMin: ns[0], NsMax: ns[len(ns)-1],
		Allocs: float64(t.allocs) / n, Bytes: float64(t.bytes) / n,
		Batches: len(t.ns), Loops: t.loops,
	}
}

// median of sorted values.
func median(s []float64) float64 {
	if len(s) == 0 {
		return 0
	}
	m := len(s) / 2
	if len(s)%2 == 1 {
		return s[m]
	}
	return (s[m-1] + s[m]) / 2
}
