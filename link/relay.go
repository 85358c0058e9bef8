package link

import (
	"container/heap"
	"context"
	"errors"
	"fmt"
	"net/netip"
	"os"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/sys/unix"
)

// ErrPrivilege reports that the link cannot be set up for want of
// privileges: CAP_NET_ADMIN and CAP_SYS_ADMIN (root), or a kernel with
// /dev/net/tun.
var ErrPrivilege = errors.New("link: needs root (CAP_NET_ADMIN, CAP_SYS_ADMIN) and /dev/net/tun")

// MTU of both ends of the link: Ethernet's, as on the networks emulated
// (loopback's 64 KiB would make every packet a burst no real link sends).
const MTU = 1500

// Link is an emulated link in place: a network namespace (the far side,
// where the client runs) joined to the host's namespace (the near side,
// where the servers are) by a TUN device at each end, and two pumps that
// carry each packet through a Pipe. In the far namespace 127.0.0.0/8 is
// routed over the link, to the near side's loopback: a client there
// dialling 127.0.0.1:port reaches a server on the host's 127.0.0.1:port
// through the emulated link, as written. The link's own addresses are
// link-local (169.254.0.0/16), routed nowhere else, and the pumps pass
// only packets between the two ends: nothing leaves the machine.
//
// Close removes everything; so does the process's death (the namespace
// and devices are held by file descriptors only).
type Link struct {
	Spec      Spec
	Near, Far netip.Addr // the host's end, the namespace's end
	ns        *netns
	near, far int // TUN file descriptors, -1 when closed
	up, down  *pump
	origin    time.Time
	wg        sync.WaitGroup
	closeOnce sync.Once
}

var linkSeq atomic.Uint32

// Available reports whether a link can be opened here: nil, or
// ErrPrivilege with what is missing (callers check before they start
// anything a missing privilege would waste).
func Available() error {
	if _, err := os.Stat("/dev/net/tun"); err != nil {
		return fmt.Errorf("%w: %v", ErrPrivilege, err)
	}
	if unix.Geteuid() != 0 {
		return fmt.Errorf("%w: running as uid %d", ErrPrivilege, unix.Geteuid())
	}
	return nil
}

// Open sets up the link of s. It needs root: ErrPrivilege otherwise.
func Open(s Spec) (l *Link, err error) {
	if err := Available(); err != nil {
		return nil, err
	}
	l = &Link{Spec: s, near: -1, far: -1}
	defer func() {
		if err != nil {
			l.Close()
		}
	}()
	if l.ns, err = newNetns(); err != nil {
		return nil, err
	}
	n := linkSeq.Add(1)
	nearName := fmt.Sprintf("wb%xl%x", os.Getpid(), n)
	var nearIdx int
	// A /30 of 169.254/16 from the PID and a counter, so concurrent links
	// (one process or several) get their own; 169.254.0/24 and .255/24
	// are reserved, hence the offset.
	for try := 0; ; try++ {
		k := (uint32(os.Getpid())*64 + n + uint32(try)*7919) % (254 * 64)
		base := netip.AddrFrom4([4]byte{169, 254, byte(1 + k/64), byte(k%64) * 4})
		l.Near, l.Far = base.Next(), base.Next().Next()
		if l.near < 0 {
			if l.near, nearIdx, err = openTUN(nearName); err != nil {
				return nil, err
			}
		}
		err = l.setupNear(nearName, nearIdx)
		if errors.Is(err, unix.EEXIST) && try < 8 {
			continue
		}
		if err != nil {
			return nil, err
		}
		break
	}
	if err = l.ns.Do(l.setupFar); err != nil {
		return nil, err
	}
	l.origin = time.Now()
	l.up = newPump(NewPipe(s, true), l.far, l.near, l.origin, s.Reorder, func(p []byte) bool {
		d := dst(p)
		return d == l.Near || (d.IsValid() && d.IsLoopback())
	})
	l.down = newPump(NewPipe(s, false), l.near, l.far, l.origin, s.Reorder, func(p []byte) bool { return dst(p) == l.Far })
	l.up.start(&l.wg)
	l.down.start(&l.wg)
	return l, nil
}

// setupNear configures the host's end: its address, up, and loopback
// traffic allowed over it (route_localnet: packets to and from
// 127.0.0.0/8 on a device that is not lo).
func (l *Link) setupNear(name string, idx int) error {
	r, err := openRtnl()
	if err != nil {
		return err
	}
	defer r.Close()
	for _, kv := range [][2]string{{"route_localnet", "1"}, {"rp_filter", "0"}} {
		if err := sysctl("ipv4/conf/"+name+"/"+kv[0], kv[1]); err != nil {
			return err
		}
	}
	_ = sysctl("ipv6/conf/"+name+"/disable_ipv6", "1") // quiet: no IPv6 chatter (absent without IPv6)
	if err := r.addAddr(idx, l.Near, l.Far); err != nil {
		return err
	}
	return r.linkUp(idx, MTU)
}

// farName is the far end's device, in a namespace of its own.
const farName = "wblink"

// setupFar runs in the far namespace: the TUN device, its address, and
// 127.0.0.0/8 routed over it (with loopback left down, nothing local
// shadows that route).
func (l *Link) setupFar() error {
	var idx int
	var err error
	if l.far, idx, err = openTUN(farName); err != nil {
		return err
	}
	r, err := openRtnl()
	if err != nil {
		return err
	}
	defer r.Close()
	for _, kv := range [][2]string{{"route_localnet", "1"}, {"rp_filter", "0"}} {
		if err := sysctl("ipv4/conf/"+farName+"/"+kv[0], kv[1]); err != nil {
			return err
		}
	}
	_ = sysctl("ipv6/conf/"+farName+"/disable_ipv6", "1")
	if err := r.addAddr(idx, l.Far, l.Near); err != nil {
		return err
	}
	if err := r.linkUp(idx, MTU); err != nil {
		return err
	}
	return r.addRoute(idx, netip.MustParsePrefix("127.0.0.0/8"), l.Far)
}

// Do runs f in the far namespace (see netns.Do): a socket f opens, or a
// process f starts, is on the far side of the link.
func (l *Link) Do(f func() error) error { return l.ns.Do(f) }

// NetnsPath is the far namespace as a path a child process can open
// (nsenter --net=PATH) while the link is open.
func (l *Link) NetnsPath() string { return fmt.Sprintf("/proc/%d/fd/%d", os.Getpid(), l.ns.fd) }

// Stats are the two directions' pipes' counts and the relay's cost.
type Stats struct {
	Up, Down PipeStats
	// Refused counts packets the pumps would not carry (addressed off the
	// link: the seal).
	Refused int64
	// CPU is the relay threads' CPU time (the four pump threads, from
	// /proc's schedstat), and CPUPerPacket that per packet admitted.
	CPU, CPUPerPacket time.Duration
	// Late is the mean time a delivered packet left after its due time
	// (timer and scheduling lag) over the Sent packets, and LateMax the
	// worst.
	Late, LateMax time.Duration
	Sent          int64
}

// Stats so far.
func (l *Link) Stats() Stats {
	s := Stats{}
	s.Up, s.Down = l.up.stats(), l.down.stats()
	s.Refused = l.up.refused.Load() + l.down.refused.Load()
	s.CPU = l.up.cpu() + l.down.cpu()
	if n := s.Up.Packets + s.Down.Packets; n > 0 {
		s.CPUPerPacket = s.CPU / time.Duration(n)
	}
	nl := l.up.lateN.Load() + l.down.lateN.Load()
	s.Sent = nl
	if nl > 0 {
		s.Late = time.Duration((l.up.lateSum.Load() + l.down.lateSum.Load()) / nl)
	}
	s.LateMax = time.Duration(max(l.up.lateMax.Load(), l.down.lateMax.Load()))
	return s
}

// Since is what happened between an earlier s0 and s: counts, CPU and
// the mean lateness of the packets sent in between (LateMax stays the
// whole life's).
func (s Stats) Since(s0 Stats) Stats {
	d := s
	sub := func(a, b PipeStats) PipeStats {
		return PipeStats{a.Packets - b.Packets, a.Bytes - b.Bytes, a.Lost - b.Lost, a.QueueDrops - b.QueueDrops, a.Delivered - b.Delivered, a.DeliveredBy - b.DeliveredBy}
	}
	d.Up, d.Down = sub(s.Up, s0.Up), sub(s.Down, s0.Down)
	d.Refused -= s0.Refused
	d.CPU -= s0.CPU
	d.CPUPerPacket = 0
	if n := d.Up.Packets + d.Down.Packets; n > 0 {
		d.CPUPerPacket = d.CPU / time.Duration(n)
	}
	d.Sent -= s0.Sent
	d.Late = 0
	if d.Sent > 0 {
		d.Late = time.Duration((float64(s.Late)*float64(s.Sent) - float64(s0.Late)*float64(s0.Sent)) / float64(d.Sent))
	}
	return d
}

// RelayLimited says whether the relay, not the emulated link, set the
// pace: packets left on average more than a millisecond and more than a
// tenth of the one-way delay after their time, or its threads were busy
// more than 90% of the wall time (of one CPU) over wall.
func (s Stats) RelayLimited(spec Spec, wall time.Duration) string {
	var why []string
	if s.Late > time.Millisecond && s.Late > spec.Delay/10 {
		why = append(why, fmt.Sprintf("packets left %v late on average", s.Late.Round(10*time.Microsecond)))
	}
	if wall > 0 && float64(s.CPU) > 0.9*float64(wall) {
		why = append(why, fmt.Sprintf("its threads used %.0f%% of a CPU", 100*float64(s.CPU)/float64(wall)))
	}
	return strings.Join(why, " and ")
}

// Close stops the pumps and removes the namespace and both devices.
func (l *Link) Close() error {
	l.closeOnce.Do(func() {
		for _, p := range []*pump{l.up, l.down} {
			if p != nil {
				p.stop()
			}
		}
		l.wg.Wait() // the pumps poll with a timeout: they see the stop soon
		for _, fd := range []int{l.near, l.far} {
			if fd >= 0 {
				unix.Close(fd)
			}
		}
		if l.ns != nil {
			l.ns.Close()
		}
	})
	return nil
}

// dst is an IPv4 packet's destination; invalid for anything else.
func dst(p []byte) netip.Addr {
	if len(p) < 20 || p[0]>>4 != 4 {
		return netip.Addr{}
	}
	return netip.AddrFrom4([4]byte(p[16:20]))
}

// threadCPU is a thread's CPU time so far: the first field of its
// schedstat, in nanoseconds.
func threadCPU(tid int) time.Duration {
	b, err := os.ReadFile(fmt.Sprintf("/proc/self/task/%d/schedstat", tid))
	if err != nil {
		return 0
	}
	f := strings.Fields(string(b))
	if len(f) == 0 {
		return 0
	}
	ns, _ := strconv.ParseInt(f[0], 10, 64)
	return time.Duration(ns)
}

// pump carries one direction: a reader that admits each packet to the
// pipe, and a writer that sends it on at its time.
type pump struct {
	pipe     *Pipe
	mu       sync.Mutex      // guards pipe.Stats for readers of stats
	from, to int             // TUN file descriptors
	tids     [2]atomic.Int64 // reader's and writer's threads
	cpuDone  atomic.Int64    // CPU of threads that have ended
	origin   time.Time
	reorder  bool
	allow    func([]byte) bool
	ch       chan []packet
	ctx      context.Context
	cancel   context.CancelFunc
	refused  atomic.Int64
	wrote    atomic.Int64 // bytes written on, at their due times
	lateN    atomic.Int64
	lateSum  atomic.Int64
	lateMax  atomic.Int64
}

type packet struct {
	at  time.Duration
	seq uint64
	buf *[]byte // from bufs, n bytes long
	n   int
}

func newPump(p *Pipe, from, to int, origin time.Time, reorder bool, allow func([]byte) bool) *pump {
	ctx, cancel := context.WithCancel(context.Background())
	return &pump{pipe: p, from: from, to: to, origin: origin, reorder: reorder, allow: allow,
		ch: make(chan []packet, 1<<10), ctx: ctx, cancel: cancel}
}

func (p *pump) stats() PipeStats {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.pipe.Stats
}

func (p *pump) start(wg *sync.WaitGroup) {
	wg.Add(2)
	for i, f := range []func(){p.read, p.write} {
		go func() {
			defer wg.Done()
			// Each on a thread of its own, so that its CPU is the relay's.
			runtime.LockOSThread()
			defer runtime.UnlockOSThread()
			tid := unix.Gettid()
			p.tids[i].Store(int64(tid))
			f()
			p.cpuDone.Add(int64(threadCPU(tid)))
			p.tids[i].Store(0)
		}()
	}
}

// cpu is the pump threads' CPU time so far.
func (p *pump) cpu() time.Duration {
	d := time.Duration(p.cpuDone.Load())
	for i := range p.tids {
		if tid := p.tids[i].Load(); tid != 0 {
			d += threadCPU(int(tid))
		}
	}
	return d
}

func (p *pump) stop() { p.cancel() }

var bufs = sync.Pool{New: func() any { b := make([]byte, MTU+64); return &b }}

// read reads packets with plain syscalls: a read while there are some,
// a poll with a timeout (to see a stop) when there are none. Packets go
// to the writer in batches (what one wake-up found, up to maxBatch): one
// hand-over per batch, not per packet, when they come fast.
func (p *pump) read() {
	defer close(p.ch)
	var seq uint64
	pfd := []unix.PollFd{{Fd: int32(p.from), Events: unix.POLLIN}}
	batch := make([]packet, 0, maxBatch)
	flush := func() bool {
		if len(batch) == 0 {
			return true
		}
		select {
		case p.ch <- batch:
			batch = make([]packet, 0, maxBatch)
			return true
		case <-p.ctx.Done():
			return false
		}
	}
	for {
		bp := bufs.Get().(*[]byte)
		n, err := unix.Read(p.from, *bp)
		if err == unix.EAGAIN || err == unix.EINTR {
			bufs.Put(bp)
			if !flush() || p.ctx.Err() != nil {
				return
			}
			_, _ = unix.Poll(pfd, 50)
			continue
		}
		if err != nil || n <= 0 {
			return
		}
		pkt := (*bp)[:n]
		if !p.allow(pkt) {
			p.refused.Add(1)
			bufs.Put(bp)
			continue
		}
		now := time.Since(p.origin)
		p.mu.Lock()
		at, v := p.pipe.Admit(now, n)
		p.mu.Unlock()
		if v != Deliver {
			bufs.Put(bp)
			continue
		}
		seq++
		batch = append(batch, packet{at, seq, bp, n})
		if len(batch) == maxBatch && !flush() {
			return
		}
	}
}

const maxBatch = 64

// write sends each packet at its time. It sleeps on its own OS thread
// with nanosleep and a 1 µs timer slack: the runtime's timers wake up to
// a millisecond late, which an emulated 1 ms RTT cannot afford. Without
// reordering the due times only grow, and a FIFO holds the packets;
// with it, a heap.
func (p *pump) write() {
	_ = unix.Prctl(unix.PR_SET_TIMERSLACK, 1000, 0, 0, 0)
	var h pktHeap
	var fifo []packet
	head := 0
	pending := func() int { return len(h) + len(fifo) - head }
	add := func(b []packet) {
		if p.reorder {
			for _, pkt := range b {
				heap.Push(&h, pkt)
			}
			return
		}
		if head > 0 && head == len(fifo) {
			fifo, head = fifo[:0], 0
		}
		fifo = append(fifo, b...)
	}
	var lateN, lateSum int64
	for {
		if pending() == 0 {
			b, ok := <-p.ch
			if !ok {
				return
			}
			add(b)
		}
	drain:
		for {
			select {
			case b, ok := <-p.ch:
				if !ok {
					return
				}
				add(b)
			default:
				break drain
			}
		}
		if p.ctx.Err() != nil {
			return
		}
		var next packet
		if p.reorder {
			next = h[0]
		} else {
			next = fifo[head]
		}
		now := time.Since(p.origin)
		if wait := next.at - now; wait > 0 {
			if p.reorder {
				// A packet due sooner may come in meanwhile.
				wait = min(wait, 200*time.Microsecond)
			}
			wait = min(wait, 20*time.Millisecond) // and see a Close in time
			ts := unix.NsecToTimespec(int64(wait))
			_ = unix.Nanosleep(&ts, nil)
			continue
		}
		if p.reorder {
			heap.Pop(&h)
		} else {
			fifo[head] = packet{}
			head++
		}
		late := int64(now - next.at)
		lateN++
		lateSum += late
		if late > p.lateMax.Load() {
			p.lateMax.Store(late)
		}
		if _, err := unix.Write(p.to, (*next.buf)[:next.n]); err == nil {
			p.wrote.Add(int64(next.n))
		}
		bufs.Put(next.buf)
		if lateN == 64 || pending() == 0 {
			p.lateN.Add(lateN)
			p.lateSum.Add(lateSum)
			lateN, lateSum = 0, 0
		}
	}
}

// pktHeap orders packets by due time, then arrival.
type pktHeap []packet

func (h pktHeap) Len() int { return len(h) }
func (h pktHeap) Less(i, j int) bool {
	return h[i].at < h[j].at || (h[i].at == h[j].at && h[i].seq < h[j].seq)
}
func (h pktHeap) Swap(i, j int) { h[i], h[j] = h[j], h[i] }
func (h *pktHeap) Push(x any)   { *h = append(*h, x.(packet)) }
func (h *pktHeap) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}
