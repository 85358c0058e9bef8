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
// of server CPU per call), so the Readers always yield. With more Ps on
// more CPUs, a yield while some P is idle wakes one for nothing: fasthttp
// at c=1 on two CPUs used 27-32% more CPU per request. So there the
// Readers yield only while the process has used at least busyShare of its
// processors over the last samplePeriod (getrusage, sampled by one
// goroutine per process), as at saturation. The share is not a signal on
// one processor: a server whose yields make it fast enough for its client
// to become the bottleneck uses about 89% of it, a server at c=1 about
// 60%.
//
// The processors are the Ps that can run at once: GOMAXPROCS, but no more
// than the CPUs the process may run on. `wirebench serve` runs two Ps on
// one CPU (a long encoding must not hold the only one), where the share
// of two could never be reached and the Readers never yielded: under wrk
// -c50 each GET of both engines made the read that finds nothing again
// (2.00 reads a GET, 0.99 of them EAGAIN). There a yield that finds
// nothing to run is not free either (it wakes the other P's thread on the
// same CPU: yielding at every read, the fasthttp engine at c=1 used 17%
// more CPU per GET), and it finds something only when other connections
// are being served. So with more Ps than one processor a Reader yields
// when other connections' requests were read since its own last read
// began: a lone client's connection never does, each of wrk's 50 nearly
// always.
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
	// busyShare is the share of its processors (two or more) the process
	// must have used over a period for the Readers to yield.
	busyShare = 0.9
)

// The Readers' modes: when they yield.
const (
	never  int32 = iota
	always       // one P, or a busy process (busyShare of its processors)
	others       // more Ps than one processor: when other connections' requests were read since this one's last read began
)

var (
	mode        atomic.Int32 // modeOf the last period
	samplerOnce sync.Once
	cpuCap      atomic.Int32 // CapProcessors's n; 0: none
	// reads counts the requests read in mode others; a Reader's seen is
	// the count when its last read began.
	reads atomic.Uint64
)

// Reader makes a connection's reads after a reply. Its zero value fails
// its reads; Init readies it. It is used from one goroutine at a time.
type Reader struct {
	nc     net.Conn
	seen   uint64
	yields uint64
}

// Init readies r to read nc, and starts the process's CPU sampler if it
// is not running yet.
func (r *Reader) Init(nc net.Conn) {
	*r = Reader{nc: nc}
	// Not a time.Ticker, which would make the scheduler read the
	// clock on every goroutine switch (package tick).
	samplerOnce.Do(func() { go sample(tick.New(samplePeriod).C, cpuTime, runtime.GOMAXPROCS, Processors()) })
}

// CapProcessors caps the CPUs the Readers count at n (n >= 1), for a
// process that may use fewer than its affinity allows: in a container
// whose CPU quota is one CPU of a larger host, NumCPU is the host's, the
// runtime's default GOMAXPROCS follows the quota (1), and a server that
// then raises GOMAXPROCS to two (wirebench serve) runs two Ps on one CPU
// as if pinned, where the busy share of two CPUs could never be reached.
// Call it before the first Init, with the GOMAXPROCS the runtime chose.
func CapProcessors(n int) {
	if n >= 1 {
		cpuCap.Store(int32(n))
	}
}

// Processors is the CPUs the Readers count: the process's affinity (at
// the first Init: the sampler keeps it), capped by CapProcessors.
func Processors() int {
	n := runtime.NumCPU()
	if c := int(cpuCap.Load()); c > 0 {
		n = min(n, c)
	}
	return n
}

// Yields returns the yields r has made.
func (r *Reader) Yields() uint64 { return r.yields }

// Read reads as nc.Read does, after a yield when its mode says so.
func (r *Reader) Read(p []byte) (int, error) {
	if r.nc == nil {
		return 0, io.ErrClosedPipe
	}
	switch mode.Load() {
	case never:
		return r.nc.Read(p)
	case always:
		runtime.Gosched()
		r.yields++
		return r.nc.Read(p)
	}
	// Besides its own, other connections' requests were read since this
	// Reader's last read began (while it waited, or since it yielded):
	// under load, goroutines readied together each read, reply and come
	// back here before the next runs, so the count since its own read
	// alone would never show them.
	c := reads.Load()
	if c-r.seen > 1 {
		runtime.Gosched()
		r.yields++
	}
	r.seen = c
	n, err := r.nc.Read(p)
	if n > 0 {
		reads.Add(1)
	}
	return n, err
}

// sample sets the mode at every tick from the CPU the process used since
// the previous one (the first tick sets the baseline), its Ps and the
// CPUs it may run on (its affinity at start-up); it runs for the life of
// the process.
func sample(tick <-chan time.Time, cpu func() time.Duration, procs func(int) int, cpus int) {
	var last time.Time
	var lastCPU time.Duration
	for now := range tick {
		c := cpu()
		if !last.IsZero() {
			mode.Store(modeOf(c-lastCPU, now.Sub(last), procs(0), cpus))
		}
		last, lastCPU = now, c
	}
}

// modeOf is the Readers' mode after a period of wall time in which the
// process used used of its processors (procs Ps, at most cpus of them
// running at once): always on one P, when others read on more Ps than one
// processor, always from busyShare of them on more.
func modeOf(used, wall time.Duration, procs, cpus int) int32 {
	n := min(procs, cpus)
	switch {
	case procs == 1:
		return always
	case n <= 1:
		return others
	case wall > 0 && float64(used) >= busyShare*float64(wall)*float64(n):
		return always
	}
	return never
}

// cpuTime is the user and system time the process has used.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
