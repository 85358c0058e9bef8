// Package idleread makes a server connection's first read after a reply
// without, under load, the system call that finds nothing (issue 17).
//
// Right after a reply the client has rarely sent its next request yet, so
// that read fails (EAGAIN), parks the goroutine and is retried after the
// poller's wake-up: a system call and two scheduler hand-offs per request
// for nothing. Yielding first (runtime.Gosched) lets the other connections'
// work run, after which the request is usually there: under wrk on one
// CPU, failed reads per GET fell from 0.99 to 0.00-0.07 (-c50) and
// 0.01-0.05 (-c10).
//
// Yielding pays only when other goroutines are waiting for a processor.
// With one P (GOMAXPROCS=1) a yield that finds none returns at once and
// costs nothing measurable (gRPC at c=1 on one CPU: 59.3 against 60.1 us
// of server CPU per call), so the Readers always yield. With more, a yield
// while some P is idle wakes one for nothing: fasthttp at c=1 on two CPUs
// used 27-32% more CPU per request. So there the Readers yield only while
// the process has used at least busyShare of its GOMAXPROCS over the last
// samplePeriod (getrusage, sampled by one goroutine per process), as at
// saturation. The share is not a signal on one P: a server whose yields
// make it fast enough for its client to become the bottleneck uses about
// 89% of its processor, a server at c=1 about 60%.
//
// A per-connection rule (stop yielding when a connection's yields stop
// sparing its waits) was tried first and dropped: at wrk -c10 on one CPU
// the connections that stopped yielding parked in the poller, which the
// scheduler consults only when its queues are empty, so the others'
// yields found nothing to run either and stopped too; failed reads per
// request settled at 0.77 instead of 0.04.
package idleread

import (
	"io"
	"net"
	"runtime"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/wirebench/wirebench/internal/tick"
)

const (
	// samplePeriod is how often the process's CPU use is sampled: long
	// enough for the kernel's accounting to be a fair average, short
	// enough to follow a load that starts or stops.
	samplePeriod = 100 * time.Millisecond
	// busyShare is the share of GOMAXPROCS (two or more) the process
	// must have used over a period for the Readers to yield.
	busyShare = 0.9
)

var (
	busy        atomic.Bool // isBusy of the last period
	samplerOnce sync.Once
)

// Reader makes a connection's reads after a reply. Its zero value fails
// its reads; Init readies it. It is used from one goroutine at a time.
type Reader struct {
	nc     net.Conn
	yields uint64
}

// Init readies r to read nc, and starts the process's CPU sampler if it
// is not running yet.
func (r *Reader) Init(nc net.Conn) {
	*r = Reader{nc: nc}
	// Not a time.Ticker, which would make the scheduler read the
	// clock on every goroutine switch (package tick).
	samplerOnce.Do(func() { go sample(tick.New(samplePeriod).C, cpuTime, runtime.GOMAXPROCS) })
}

// Yields returns the yields r has made.
func (r *Reader) Yields() uint64 { return r.yields }

// Read reads as nc.Read does, after a yield while the process is busy.
func (r *Reader) Read(p []byte) (int, error) {
	if r.nc == nil {
		return 0, io.ErrClosedPipe
	}
	if busy.Load() {
		runtime.Gosched()
		r.yields++
	}
	return r.nc.Read(p)
}

// sample sets busy at every tick from the CPU the process used since the
// previous one (the first tick sets the baseline); it runs for the life of
// the process.
func sample(tick <-chan time.Time, cpu func() time.Duration, procs func(int) int) {
	var last time.Time
	var lastCPU time.Duration
	for now := range tick {
		c := cpu()
		if !last.IsZero() {
			busy.Store(isBusy(c-lastCPU, now.Sub(last), procs(0)))
		}
		last, lastCPU = now, c
	}
}

// isBusy tells whether the Readers yield after a period of wall time in
// which the process used used of procs processors: always on one, from
// busyShare of them on more.
func isBusy(used, wall time.Duration, procs int) bool {
	return procs == 1 || wall > 0 && float64(used) >= busyShare*float64(wall)*float64(procs)
}

// cpuTime is the user and system time the process has used.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
