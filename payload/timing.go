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
	var out results.PayloadCPU
	if msgs == 0 {
		return out, nil
	}
	t0 := time.Now()
	if err := pass(); err != nil {
		return out, err
	}
	one := max(time.Since(t0), time.Microsecond)
	per := budget / time.Duration(batches)
	loops := int(max(1, per/one))
	var ns []float64
	var ms0, ms1 runtime.MemStats
	var allocs, bytes uint64
	runtime.GC()
	for range batches {
		runtime.ReadMemStats(&ms0)
		start := time.Now()
		for range loops {
			if err := pass(); err != nil {
				return out, err
			}
		}
		d := time.Since(start)
		runtime.ReadMemStats(&ms1)
		allocs += ms1.Mallocs - ms0.Mallocs
		bytes += ms1.TotalAlloc - ms0.TotalAlloc
		ns = append(ns, float64(d.Nanoseconds())/float64(loops*msgs))
	}
	slices.Sort(ns)
	n := float64(batches * loops * msgs)
	out = results.PayloadCPU{
		Ns: median(ns), NsMin: ns[0], NsMax: ns[len(ns)-1],
		Allocs: float64(allocs) / n, Bytes: float64(bytes) / n,
		Batches: batches, Loops: loops,
	}
	return out, nil
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
