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
// of each device (Linux 6.7), both on one ring: armed once, each reads
// every packet its device has into buffers the reader provides, a
// completion each, inside the reader's own io_uring_enter (the ring is
// DEFER_TASKRUN: the kernel does the reads there, on the reader's
// thread, so their CPU stays the relay's). One system call then carries
// all that came since the last, both ways. Where the kernel refuses it,
// the reader reads with system calls (readloop.go's readPoll; and on
// architectures internal/uring does not cover: ringread_other.go).

// ringSlots is how many packets of a device one io_uring_enter can read
// before the reader takes them (more, and the multishot read stops for
// want of a buffer and is armed again). Each slot holds a big buffer (a
// super-packet fits): 64 of them are 4 MiB a direction, most never
// touched by small packets.
const ringSlots = 64

// readOp is the read asked of io_uring; tests set one no kernel has to
// see the refusal handled.
var readOp uint8 = uring.OpReadMultishot

// The user data of a direction d's multishot read is readTag+d, and
// its buffer group d.
const (
	readTag   = 1
	cancelTag = 3
)

// ringDir is one device's multishot read on the reader's ring.
type ringDir struct {
	r     *reader
	slots *uring.BufRing
	bufs  []*pbuf // the kernel writes into these: each stays referenced until its completion (or the read's cancellation) has come
	armed bool
}

// readRing reads both devices through one io_uring, a multishot read
// each, until the link stops, and reports true; false, having read
// nothing, when io_uring or its multishot read is not to be had here
// (the caller reads with system calls instead).
func (rr *relayReader) readRing(rs [2]*reader) bool {
	// Completions: twice what both reads can post in one round.
	ring, err := uring.New(2 * ringSlots)
	if err != nil {
		return false
	}
	defer ring.Close()
	sp := spinner{max: rr.spinMax, cur: rr.spinMax}
	ready := ring.Poll
	var dirs [2]ringDir
	for d, r := range rs {
		slots, err := ring.NewBufSlots(uint16(d), ringSlots)
		if err != nil {
			return false
		}
		dirs[d] = ringDir{r: r, slots: slots, bufs: make([]*pbuf, ringSlots)}
		for i := range dirs[d].bufs {
			dirs[d].bufs[i] = r.free.pbuf(true)
			slots.GiveBuf(uint16(i), dirs[d].bufs[i].b)
		}
		slots.Publish()
	}
	arm := func(d int) {
		q := ring.SQE()
		q.Opcode, q.Fd, q.Flags, q.BufIndex, q.UserData = readOp, int32(rs[d].p.from), uring.SqeBufferSelect, uint16(d), uint64(readTag+d)
		dirs[d].armed = true
	}
	var (
		read    int64 // completions that carried a packet
		stopped bool
		failed  unix.Errno
	)
	handle := func(c *uring.CQE) {
		d := int(c.UserData) - readTag
		if d < 0 || d > 1 {
			return
		}
		rd := &dirs[d]
		if c.Flags&uring.CQEFMore == 0 {
			rd.armed = false
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
				rr.ringRead.Store(true)
			}
			kept, ok := rd.r.admit(rd.bufs[bid], int(c.Res))
			if kept {
				rd.bufs[bid] = rd.r.free.pbuf(true)
			}
			stopped = !ok
		}
		rd.slots.GiveBuf(bid, rd.bufs[bid].b)
	}
	defer func() {
		// The kernel must be done with the buffers before they go: cancel
		// the reads and wait for their last completions (what they carry
		// is admitted unless the link stops: on a refusal the caller
		// reads on from there).
		for d := range dirs {
			if dirs[d].armed {
				q := ring.SQE()
				q.Opcode, q.Addr, q.UserData = uring.OpAsyncCancel, uint64(readTag+d), cancelTag
			}
		}
		deadline := time.Now().Add(2 * time.Second)
		for (dirs[0].armed || dirs[1].armed) && time.Now().Before(deadline) {
			if ring.EnterBlocking(1, int64(100*time.Millisecond)) != nil {
				break
			}
			ring.Completions(handle)
		}
		for d := range dirs {
			if dirs[d].armed {
				// Never seen: keep the buffers out of the collector's
				// reach rather than let the kernel write into freed memory.
				leakedMu.Lock()
				leakedRingBufs = append(leakedRingBufs, dirs[d].bufs)
				leakedMu.Unlock()
			}
		}
	}()
	for {
		if rr.stopped() {
			return true
		}
		for d := range dirs {
			if !dirs[d].armed {
				arm(d)
			}
		}
		// A packet that comes within the spin costs no sleep and no
		// wake-up of this thread: the spin's Poll has read it.
		if ring.Pending() == 0 && sp.spin(ready) {
			rr.spinHits.Add(1)
		} else {
			// Submits what is pending (an arming), runs the reads the
			// devices have ready, waits for one if none (50 ms at most:
			// to see a stop).
			rr.waits.Add(1)
			t := time.Now()
			if err := ring.EnterBlocking(1, int64(50*time.Millisecond)); err != nil {
				return true
			}
			sp.slept(time.Since(t))
		}
		ring.Completions(handle)
		for d := range dirs {
			dirs[d].slots.Publish()
		}
		if failed != 0 {
			// Refused at once (read nothing yet): the caller reads with
			// system calls, once the deferred cancel has ended a read
			// still armed.
			return read != 0
		}
		if stopped {
			return true
		}
		// Each direction's batch: what this wake-up read of it.
		for _, r := range rs {
			if !r.flush() {
				return true
			}
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
