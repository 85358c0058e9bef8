package load

import (
	"runtime/metrics"
	"sync"
	"sync/atomic"

	"github.com/wirebench/wirebench/measure"
)

// workerStats is one worker's record of the run. Only its worker writes
// it; the totals are merged after the run (never one histogram under a
// global lock). mu is taken only when a live reporter is running, so it
// is uncontended but for one read a second.
type workerStats struct {
	lat, svc, lag *measure.Histogram
	ops           []opStats
	status        [maxStatus]int64 // HTTP statuses and GRPCStatus codes; an array, not a map, on the hot path
	fails         map[string]int64
	bodyIn        int64
	bodyOut       int64
	interrupted   int64
	retried       int64   // requests sent again after a keep-alive connection closed under them
	keep          *keeper // the slowest requests and a few per bucket (exemplars.go); nil keeps none

	multi    bool // several ops: each keeps its own histograms, made on first use
	live     bool
	mu       sync.Mutex
	requests atomic.Int64 // read by the live reporter
	failed   atomic.Int64
}

// maxStatus bounds Outcome.Status: HTTP codes < 1000, gRPC codes 1000..1016.
const maxStatus = 1100

type opStats struct {
	count, failed int64
	lat, svc      *measure.Histogram
}

func newWorkerStats(nops int, live bool) *workerStats {
	w := &workerStats{
		lat: measure.NewHistogram(), svc: measure.NewHistogram(), lag: measure.NewHistogram(),
		ops: make([]opStats, nops), fails: map[string]int64{}, live: live,
	}
	// With one operation its histograms are the totals: record them once.
	// With several, an op's histograms (0.4 MiB) are made when the worker
	// first records it: a replay has up to 65 ops, and a worker may see few.
	w.multi = nops > 1
	return w
}

// heapAllocs reads the process's cumulative heap allocations (objects and
// bytes) from runtime/metrics, which needs no stop-the-world.
func heapAllocs() (objects, bytes int64) {
	s := []metrics.Sample{{Name: "/gc/heap/allocs:objects"}, {Name: "/gc/heap/allocs:bytes"}}
	metrics.Read(s)
	if s[0].Value.Kind() != metrics.KindUint64 || s[1].Value.Kind() != metrics.KindUint64 {
		return 0, 0
	}
	return int64(s[0].Value.Uint64()), int64(s[1].Value.Uint64())
}
