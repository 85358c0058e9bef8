package link

import (
	"runtime"
	"sync"
	"sync/atomic"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

// relayReader is the link's reading side: one OS thread reads both TUN
// devices, each packet admitted to its direction's pipe and its due
// batches written by this thread or handed to that direction's writer
// (reader.flush). One thread rather than one a direction, because a
// wake-up is most of what a packet costs the relay on a VM (a sleep in
// the kernel and the switch back): a request and its answer, or a
// segment and its ACK, then often share one, where two readers each
// paid their own (docs/network.md, "Echoes, and the reader's own
// writes": tunrelay.c's 1t against 2t). Each direction keeps its own
// order: its packets come from one device, read in order, through its
// own reader state.
type relayReader struct {
	dirs     [2]*pump // up (reads the far device), down (reads the near one)
	ring     bool     // read through io_uring where the kernel can (ringread.go)
	spinMax  time.Duration
	waits    atomic.Int64 // waits for packets (polls, or io_uring_enters)
	spinHits atomic.Int64 // spins that a packet ended (no sleep)
	ringRead atomic.Bool  // reading through io_uring
	clock    threadClock
}

func newRelayReader(up, down *pump) *relayReader {
	return &relayReader{dirs: [2]*pump{up, down}, ring: !noUring, spinMax: spinMax}
}

func (rr *relayReader) start(wg *sync.WaitGroup) { rr.clock.run(wg, "link-read", rr.read) }

func (rr *relayReader) cpu() time.Duration { return rr.clock.cpu() }

// stopped: the link is closing (Close stops both pumps).
func (rr *relayReader) stopped() bool {
	return rr.dirs[0].ctx.Err() != nil || rr.dirs[1].ctx.Err() != nil
}

// read reads both devices until the link closes, then ends both
// writers: through io_uring where the kernel has its multishot read
// (ringread.go), else with a read system call a packet and one poll over
// both devices when neither has any.
func (rr *relayReader) read() {
	for _, p := range rr.dirs {
		defer close(p.ch)
	}
	rs := [2]*reader{rr.dirs[0].newReader(), rr.dirs[1].newReader()}
	if rr.ring && rr.readRing(rs) {
		return
	}
	rr.readPoll(rs)
}

// readPoll is read with system calls. A device is read until it has no
// more, or for a batch's worth of packets: then the other's turn comes,
// so that a flood one way does not hold up the other.
func (rr *relayReader) readPoll(rs [2]*reader) {
	pfd := []unix.PollFd{{Fd: int32(rs[0].p.from), Events: unix.POLLIN}, {Fd: int32(rs[1].p.from), Events: unix.POLLIN}}
	rbs := [2]*pbuf{rs[0].free.pbuf(true), rs[1].free.pbuf(true)}
	ready := [2]bool{true, true}
	for {
		more := false
		for d, r := range rs {
			if !ready[d] {
				continue
			}
			ready[d] = false
			for k := 0; k < maxBatch; k++ {
				n, err := unix.Read(r.p.from, rbs[d].b)
				if err == unix.EAGAIN || err == unix.EINTR {
					break
				}
				if err != nil || n <= 0 {
					return
				}
				kept, ok := r.admit(rbs[d], n)
				if !ok {
					return
				}
				if kept {
					rbs[d] = r.free.pbuf(true)
				}
				ready[d] = k == maxBatch-1 // it may have more
			}
			more = more || ready[d]
			if !r.flush() {
				return
			}
		}
		if rr.stopped() {
			return
		}
		if more {
			continue
		}
		rr.waits.Add(1)
		pfd[0].Revents, pfd[1].Revents = 0, 0
		_, _ = unix.Poll(pfd, 50) // a timeout, to see a stop
		for d := range pfd {
			ready[d] = pfd[d].Revents != 0
		}
	}
}

// threadClock is one relay thread's CPU time: from its start, so that
// what the thread did before does not count, and kept when it ends.
type threadClock struct {
	mu   sync.Mutex
	tid  int           // 0 when not running
	base time.Duration // its CPU when it started the relay's work
	done time.Duration // CPU of the threads that have ended
}

// run runs f on an OS thread of its own, named name (so that top -H and
// perf tell the relay's threads apart), and counts that thread's CPU.
// The thread is never unlocked, so that it ends with f: one from the
// runtime's pool would carry other work's CPU in, and take the relay's
// out to other work.
func (c *threadClock) run(wg *sync.WaitGroup, name string, f func()) {
	wg.Add(1)
	go func() {
		defer wg.Done()
		runtime.LockOSThread()
		tid := unix.Gettid()
		if b, err := unix.BytePtrFromString(name); err == nil {
			_ = unix.Prctl(unix.PR_SET_NAME, uintptr(unsafe.Pointer(b)), 0, 0, 0)
		}
		c.mu.Lock()
		c.tid, c.base = tid, threadCPU(tid)
		c.mu.Unlock()
		f()
		c.mu.Lock()
		c.done += threadCPU(tid) - c.base
		c.tid = 0
		c.mu.Unlock()
	}()
}

// cpu is the CPU time so far.
func (c *threadClock) cpu() time.Duration {
	c.mu.Lock()
	defer c.mu.Unlock()
	d := c.done
	if c.tid != 0 {
		d += threadCPU(c.tid) - c.base
	}
	return d
}

// running is the thread's id while it runs, else 0.
func (c *threadClock) running() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.tid
}
