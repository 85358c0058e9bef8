//go:build linux && (amd64 || arm64)

package link

import (
	"sync"
	"time"

	"github.com/wirebench/wirebench/internal/uring"
	"golang.org/x/sys/unix"
)

// A TUN device hands over one packet a read, and small datagrams sent
// one at a time come one a read: a system call each, which on this
// kind of machine (a VM with its mitigations) costs as much as the
// read's own work. So the reader asks io_uring for one multishot read
// (Linux 6.7): armed once, it reads every packet the device has into
// buffers the reader provides, a completion each, inside the reader's
// own io_uring_enter (the ring is DEFER_TASKRUN: the kernel does the
// reads there, on the reader's thread, so their CPU stays the relay's).
// One system call then carries all that came since the last. Where the
// kernel refuses it, the reader reads as before (and on architectures
// internal/uring does not cover: ringread_other.go).

// ringSlots is how many packets one io_uring_enter can read before the
// reader takes them (more, and the multishot read stops for want of a
// buffer and is armed again). Each slot holds a big buffer (a
// super-packet fits): 64 of them are 4 MiB a direction, most never
// touched by small packets.
const ringSlots = 64

// readOp is the read asked of io_uring; tests set one no kernel has to
// see the refusal handled.
var readOp uint8 = uring.OpReadMultishot

const (
	readTag   = 1 // the multishot read's user data
	cancelTag = 2
)

// readRing reads the pump's packets through io_uring until the pump
// stops, and reports true; false, having read nothing, when io_uring or
// its multishot read is not to be had here (the caller reads with
// system calls instead).
func (r *reader) readRing() bool {
	p := r.p
	ring, err := uring.New(ringSlots) // twice as many completions: a round's and the next
	if err != nil {
		return false
	}
	sp := spinner{max: p.spinMax, cur: p.spinMax}
	ready := ring.Poll
	defer ring.Close()
	slots, err := ring.NewBufSlots(0, ringSlots)
	if err != nil {
		return false
	}
	// The kernel writes into these: each stays referenced here until its
	// completion (or the read's cancellation) has come.
	bufs := make([]*pbuf, ringSlots)
	for i := range bufs {
		bufs[i] = r.free.pbuf(true)
		slots.GiveBuf(uint16(i), bufs[i].b)
	}
	slots.Publish()
	arm := func() {
		q := ring.SQE()
		q.Opcode, q.Fd, q.Flags, q.BufIndex, q.UserData = readOp, int32(p.from), uring.SqeBufferSelect, 0, readTag
	}
	arm()
	var (
		read    int64 // completions that carried a packet
		armed   = true
		stopped bool
		failed  unix.Errno
	)
	handle := func(c *uring.CQE) {
		if c.UserData != readTag {
			return
		}
		if c.Flags&uring.CQEFMore == 0 {
			armed = false
		}
		if c.Res < 0 {
			switch e := unix.Errno(-c.Res); e {
			case unix.ENOBUFS, unix.EINTR, unix.EAGAIN, unix.ECANCELED:
			default:
				failed = e
			}
			return
		}
		if c.Flags&uring.CQEFBuffer == 0 {
			return
		}
		bid := uint16(c.Flags >> 16)
		if c.Res == 0 {
			stopped = true
		}
		if !stopped {
			if read++; read == 1 {
				p.ringRead.Store(true)
			}
			kept, ok := r.admit(bufs[bid], int(c.Res))
			if kept {
				bufs[bid] = r.free.pbuf(true)
			}
			stopped = !ok
		}
		slots.GiveBuf(bid, bufs[bid].b)
	}
	defer func() {
		if !armed {
			return
		}
		// The kernel must be done with the buffers before they go: cancel
		// the read and wait for its last completion.
		q := ring.SQE()
		q.Opcode, q.Addr, q.UserData = uring.OpAsyncCancel, readTag, cancelTag
		stopped = true
		deadline := time.Now().Add(2 * time.Second)
		for armed && time.Now().Before(deadline) {
			if ring.EnterBlocking(1, int64(100*time.Millisecond)) != nil {
				break
			}
			ring.Completions(handle)
		}
		if armed {
			// Never seen: keep the buffers out of the collector's reach
			// rather than let the kernel write into freed memory.
			leakedMu.Lock()
			leakedRingBufs = append(leakedRingBufs, bufs)
			leakedMu.Unlock()
		}
	}()
	for {
		if p.ctx.Err() != nil {
			return true
		}
		if !armed {
			arm()
			armed = true
		}
		// A packet that comes within the spin costs no sleep and no
		// wake-up of this thread: the spin's Poll has read it.
		if ring.Pending() == 0 && sp.spin(ready) {
			p.spinHits.Add(1)
		} else {
			// Submits what is pending (an arming), runs the reads the
			// device has ready, waits for one if none (50 ms at most: to
			// see a stop).
			p.waits.Add(1)
			t := time.Now()
			if err := ring.EnterBlocking(1, int64(50*time.Millisecond)); err != nil {
				return true
			}
			sp.slept(time.Since(t))
		}
		ring.Completions(handle)
		slots.Publish()
		if failed != 0 {
			if read == 0 {
				armed = false // refused at once: nothing in flight
				return false
			}
			return true
		}
		if stopped || !r.flush() {
			return true
		}
	}
}

// spinMax bounds the reader's spin before it sleeps; 0, the default,
// never spins. Measured on a 2-CPU VM a 10 or 30 µs spin saved no CPU a
// packet (docs/network.md, "Spinning before a sleep"): the packet it
// waits for is made by a sender that needs the CPU the spin holds. It
// may pay where the relay has a core of its own; the benchmarks set it
// ($WIREBENCH_RELAY_SPIN), and a spin longer than a sleep and a wake-up
// cost (3-15 µs here) costs more than it can save.
var spinMax time.Duration

// spinner is the reader's adaptive spin: after the packets of a wake-up,
// it polls the ring for the next (io_uring_enter without a wait: it runs
// the multishot read's deferred reads) for up to its current bound
// before the reader sleeps. The bound is spinMax while
// packets come within it; every wait that a spin of spinMax would not
// have caught halves it, down to none: an idle link, or packets further
// apart than a wake-up costs, pay for no spin, beyond a few shrinking
// ones after the last packet. A sleep that ended within spinMax sets it
// back. Its CPU is the reader's own, counted in the relay's.
type spinner struct {
	max, cur time.Duration
	spent    time.Duration // by the last spin that missed
}

// spin spins until ready says so, or the bound passes: true when ready.
func (s *spinner) spin(ready func() bool) bool {
	s.spent = 0
	if s.cur <= 0 {
		return false
	}
	t := time.Now()
	for {
		if ready() {
			return true
		}
		if s.spent = time.Since(t); s.spent >= s.cur {
			return false
		}
	}
}

// slept adapts the bound to a sleep of d that followed a missed spin (or
// none).
func (s *spinner) slept(d time.Duration) {
	if s.spent+d <= s.max {
		s.cur = s.max
		return
	}
	if s.cur /= 2; s.cur < s.max/16 {
		s.cur = 0
	}
}

// leakedRingBufs holds buffers whose read could not be seen to end.
var (
	leakedMu       sync.Mutex
	leakedRingBufs [][]*pbuf
)
