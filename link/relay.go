package link

import (
	"container/heap"
	"context"
	"errors"
	"fmt"
	"net/netip"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/sys/unix"

	"github.com/wirebench/wirebench/results"
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
	// nearUSO, farUSO: the device takes UDP super-packets (USO).
	nearUSO, farUSO bool
	farIdx          int       // the far device's index, in its namespace
	drops           *tunDrops // the kernel's drops at the devices' queues
	up, down        *pump
	rd              *relayReader // reads both devices, for both pumps
	proxy           *proxy       // in a user namespace: the host's servers reached for the far side
	origin          time.Time
	wg              sync.WaitGroup
	closeOnce       sync.Once
	// The reaper ends what the commands started leave (reaper.go).
	reaperOnce sync.Once
	reaperErr  error
	reaperStop chan struct{}
	reaper     *exec.Cmd
}

var linkSeq atomic.Uint32

// Available reports whether a link can be opened here: nil, or
// ErrPrivilege with what is missing (callers check before they start
// anything a missing privilege would waste).
func Available() error {
	// Started in a user namespace of its own (StartInUserns): its
	// loopback up before the servers here listen on it.
	if _, err := fromUserns(); err != nil {
		return err
	}
	if _, err := os.Stat("/dev/net/tun"); err != nil {
		return fmt.Errorf("%w: %v", ErrPrivilege, err)
	}
	if unix.Geteuid() != 0 {
		return fmt.Errorf("%w: running as uid %d", ErrPrivilege, unix.Geteuid())
	}
	return nil
}

// Open sets up the link of s. It needs root: ErrPrivilege otherwise.
// The result is unnamed: a named one is nil after "return nil, err", and
// the deferred cleanup of a half-made link would call Close on nil.
func Open(s Spec) (_ *Link, err error) {
	host, err := fromUserns()
	if err != nil {
		return nil, err
	}
	if err := Available(); err != nil {
		return nil, err
	}
	l := &Link{Spec: s, near: -1, far: -1}
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
			if l.near, nearIdx, l.nearUSO, err = openTUN(nearName); err != nil {
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
	if l.drops, err = l.openDrops(nearIdx); err != nil {
		return nil, err
	}
	l.origin = time.Now()
	l.up = newPump(NewPipe(s, true), l.far, l.near, l.nearUSO, l.origin, s.Reorder, func(p []byte) bool {
		d := dst(p)
		return d == l.Near || (d.IsValid() && d.IsLoopback())
	})
	l.down = newPump(NewPipe(s, false), l.near, l.far, l.farUSO, l.origin, s.Reorder, func(p []byte) bool { return dst(p) == l.Far })
	if host != nil {
		l.proxy = newProxy(host)
		l.up.see = l.proxy.see
	}
	l.rd = newRelayReader(l.up, l.down)
	if !noPumps {
		l.up.start(&l.wg, "up")
		l.down.start(&l.wg, "down")
		l.rd.start(&l.wg)
	}
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
	if l.far, idx, l.farUSO, err = openTUN(farName); err != nil {
		return err
	}
	l.farIdx = idx
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

// openDrops opens the netlink sockets that read the devices' drops, the
// near one here and the far one in the far namespace, and takes the
// counts so far as the base.
func (l *Link) openDrops(nearIdx int) (*tunDrops, error) {
	d := &tunDrops{idx: [2]int{l.farIdx, nearIdx}}
	var err error
	if d.rt[1], err = openRtnl(); err != nil {
		return nil, err
	}
	if err = l.ns.Do(func() (err error) { d.rt[0], err = openRtnl(); return err }); err != nil {
		d.close()
		return nil, err
	}
	for i, r := range d.rt {
		if d.base[i], err = r.txDropped(d.idx[i]); err != nil {
			d.close()
			return nil, fmt.Errorf("the TUN devices' drop counts: %w", err)
		}
		d.last[i] = d.base[i]
	}
	return d, nil
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
	// CPU is the relay threads' CPU time (the reader and the two
	// writers, from /proc's schedstat), and CPUPerPacket that per packet admitted. A
	// packet is a packet on the emulated wire: each segment of a
	// super-packet counts (Up.Packets, Down.Packets).
	CPU, CPUPerPacket time.Duration
	// Reads and Writes are the relay's reads and writes on the TUN
	// devices that carried packets, both ways (a read through io_uring
	// is no system call of its own); WriteErrors the writes refused.
	// Waits are the reader's system calls that waited for packets (a
	// poll, or an io_uring_enter that also did the reads).
	Reads, Writes, WriteErrors, Waits int64
	// Late is the mean time a delivered packet left after its due time
	// (timer and scheduling lag) over the Sent packets, and LateMax the
	// worst.
	Late, LateMax time.Duration
	Sent          int64
	// KernelDropsUp and KernelDropsDown are the packets the kernel
	// dropped at a TUN device because its queue (txqueuelen) was full
	// while the relay's reader was behind: they never reached the relay,
	// so they are in none of the counts above (the devices' tx_dropped,
	// the far device's up, the near one's down).
	KernelDropsUp, KernelDropsDown int64
}

// Stats so far.
func (l *Link) Stats() Stats {
	s := Stats{}
	s.Up, s.Down = l.up.stats(), l.down.stats()
	s.Refused = l.up.refused.Load() + l.down.refused.Load()
	s.Reads = l.up.reads.Load() + l.down.reads.Load()
	s.Waits = l.rd.waits.Load()
	s.Writes = l.up.writes.Load() + l.down.writes.Load()
	s.WriteErrors = l.up.writeErr.Load() + l.down.writeErr.Load()
	s.CPU = l.up.cpu() + l.down.cpu() + l.rd.cpu()
	if n := s.Up.Packets + s.Down.Packets; n > 0 {
		s.CPUPerPacket = s.CPU / time.Duration(n)
	}
	nl := l.up.lateN.Load() + l.down.lateN.Load()
	s.Sent = nl
	if nl > 0 {
		s.Late = time.Duration((l.up.lateSum.Load() + l.down.lateSum.Load()) / nl)
	}
	s.LateMax = time.Duration(max(l.up.lateMax.Load(), l.down.lateMax.Load()))
	s.KernelDropsUp, s.KernelDropsDown = l.drops.counts()
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
	d.Reads -= s0.Reads
	d.Waits -= s0.Waits
	d.Writes -= s0.Writes
	d.WriteErrors -= s0.WriteErrors
	d.CPU -= s0.CPU
	d.KernelDropsUp -= s0.KernelDropsUp
	d.KernelDropsDown -= s0.KernelDropsDown
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
	if n := s.KernelDropsUp + s.KernelDropsDown; n > 0 {
		why = append(why, fmt.Sprintf("the kernel dropped %d packets (%d up, %d down) at the TUN devices' queues before the relay read them", n, s.KernelDropsUp, s.KernelDropsDown))
	}
	return strings.Join(why, " and ")
}

// Result is s, the relay's figures over a run of wall on spec's link,
// as a result records them: a study's trial, or a load, capacity or
// replay run's --out.
func (s Stats) Result(spec Spec, wall time.Duration) *results.LinkRelay {
	return &results.LinkRelay{UpPackets: s.Up.Packets, UpBytes: s.Up.Bytes, UpLost: s.Up.Lost, UpQueueDrops: s.Up.QueueDrops,
		DownPackets: s.Down.Packets, DownBytes: s.Down.Bytes, DownLost: s.Down.Lost, DownQueueDrops: s.Down.QueueDrops,
		KernelDrops: s.KernelDropsUp + s.KernelDropsDown, CPUPerPacket: s.CPUPerPacket, Late: s.Late,
		Limited: s.RelayLimited(spec, wall)}
}

// Drain keeps the link up until no packet has crossed it for a round
// trip (the delay both ways, four jitters, a full packet's serialisation
// each way, and 50 ms), or max has passed: what the far side's program sent
// just before it ended (its last data, its FINs) and the near side's
// answers still arrive, as they would on a real path, where closing the
// link at once would drop them in flight.
func (l *Link) Drain(max time.Duration) {
	quiet := l.expectedRTT(1500) + 8*l.Spec.Jitter + 50*time.Millisecond
	deadline := time.Now().Add(max)
	activity := func() int64 {
		s := l.Stats()
		return s.Up.Packets + s.Down.Packets + s.Sent
	}
	last, since := activity(), time.Now()
	for time.Now().Before(deadline) && time.Since(since) < quiet {
		time.Sleep(5 * time.Millisecond)
		if a := activity(); a != last {
			last, since = a, time.Now()
		}
	}
}

// Close stops the pumps and removes the namespace and both devices.
func (l *Link) Close() error {
	l.closeOnce.Do(func() {
		l.stopReaper()
		for _, p := range []*pump{l.up, l.down} {
			if p != nil {
				p.stop()
			}
		}
		l.wg.Wait()      // the reader and writers wait with a timeout: they see the stop soon
		l.drops.counts() // the last counts, kept for Stats after Close
		l.drops.close()
		if l.proxy != nil {
			l.proxy.Close()
		}
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

// pump carries one direction: the link's reader (readloop.go, one
// thread for both directions) admits each wire packet it reads from the
// direction's device (a packet read, or each segment of a super-packet)
// to the pipe, and a writer sends them on at their time.
type pump struct {
	pipe     *Pipe
	mu       sync.Mutex   // guards pipe.Stats for readers of stats
	from, to int          // TUN file descriptors
	uso      bool         // to takes UDP super-packets
	direct   bool         // the reader writes what is due when the writer has nothing
	queued   atomic.Int64 // entries handed to the writer and not yet written
	directs  atomic.Int64 // batches the reader wrote itself
	handed   atomic.Int64 // batches handed to the writer
	wclock   threadClock  // the writer's thread
	origin   time.Time
	reorder  bool
	allow    func([]byte) bool
	see      func([]byte) // if set, shown each packet admitted before it goes on
	ch       chan []packet
	free     recycler // what the writer is done with, back to the reader
	ctx      context.Context
	cancel   context.CancelFunc
	refused  atomic.Int64
	wrote    atomic.Int64 // bytes on the wire written on, at their due times
	reads    atomic.Int64 // reads that returned a packet (system calls, or io_uring's)
	writes   atomic.Int64 // write system calls
	writeErr atomic.Int64 // writes the device refused
	lateN    atomic.Int64
	lateSum  atomic.Int64
	lateMax  atomic.Int64
}

// pbuf is a packet as read (virtio header first), shared by the queue
// entries of its segments.
type pbuf struct {
	b    []byte
	n    int // bytes of b in use
	segs segs
	refs int // entries not yet written: the writer's alone once handed over
	big  bool
}

func (b *pbuf) pkt() []byte { return b.b[vnetHdrLen:b.n] }

// Reads go to a buffer a super-packet fits; a plain packet is copied to
// a small one, so that what waits in a queue holds no more than its size.
const smallBufLen = vnetHdrLen + MTU + 64

func newPbuf(big bool) *pbuf {
	if big {
		return &pbuf{b: make([]byte, vnetHdrLen+maxIPLen), big: true}
	}
	return &pbuf{b: make([]byte, smallBufLen)}
}

// recycler hands the buffers and batches the writer is done with back to
// the reader, a batch of them at a time: at 100k+ packets/s a buffer
// allocated for each (or a sync.Pool, emptied at every GC) had the
// reader spend a fifth of its time in the allocator and in page faults
// on fresh heap. What it keeps is bounded; the rest goes to the GC.
type recycler struct {
	mu      sync.Mutex
	small   []*pbuf
	big     []*pbuf
	batches [][]packet
}

const (
	keepSmall = 1 << 13 // 12 MiB at most
	keepBig   = 32      // 2 MiB
	// As many batches as the hand-over channel holds (3 MiB): with
	// fewer, a writer that fell behind for a few milliseconds (the
	// machine's CPUs taken by the client and server) gave back more than
	// was kept, and the reader allocated the difference again after each
	// such stall: a batch every few packets, a GC cycle's worth of garbage
	// a second at 100k packets/s.
	keepBatches = chanBatches
)

// put takes back what the writer released since its last put (and
// empties those slices).
func (r *recycler) put(small, big *[]*pbuf, batches *[][]packet) {
	if len(*small)+len(*big)+len(*batches) == 0 {
		return
	}
	r.mu.Lock()
	r.small = appendUpTo(r.small, *small, keepSmall)
	r.big = appendUpTo(r.big, *big, keepBig)
	r.batches = appendUpTo(r.batches, *batches, keepBatches)
	r.mu.Unlock()
	clear(*small)
	clear(*big)
	clear(*batches)
	*small, *big, *batches = (*small)[:0], (*big)[:0], (*batches)[:0]
}

func appendUpTo[T any](dst, src []T, limit int) []T {
	return append(dst, src[:max(0, min(len(src), limit-len(dst)))]...)
}

// take swaps the reader's empty local lists for what was put back.
func (r *recycler) take(small, big *[]*pbuf, batches *[][]packet) {
	r.mu.Lock()
	if len(*small) == 0 {
		*small, r.small = r.small, *small
	}
	if len(*big) == 0 {
		*big, r.big = r.big, *big
	}
	if len(*batches) == 0 {
		*batches, r.batches = r.batches, *batches
	}
	r.mu.Unlock()
}

// readerFree is the reader's side of the recycler: its local lists, refilled
// from the writer's returns when empty.
type readerFree struct {
	r       *recycler
	small   []*pbuf
	big     []*pbuf
	batches [][]packet
}

func (f *readerFree) pbuf(big bool) *pbuf {
	l := &f.small
	if big {
		l = &f.big
	}
	if len(*l) == 0 {
		f.r.take(&f.small, &f.big, &f.batches)
	}
	if n := len(*l); n > 0 {
		b := (*l)[n-1]
		(*l)[n-1] = nil
		*l = (*l)[:n-1]
		return b
	}
	return newPbuf(big)
}

func (f *readerFree) batch() []packet {
	if len(f.batches) == 0 {
		f.r.take(&f.small, &f.big, &f.batches)
	}
	if n := len(f.batches); n > 0 {
		b := f.batches[n-1]
		f.batches[n-1] = nil
		f.batches = f.batches[:n-1]
		return b[:0]
	}
	return make([]packet, 0, maxBatch)
}

// keep is a buffer the reader let go of itself.
func (f *readerFree) keep(b *pbuf) {
	if b.big {
		f.big = append(f.big, b)
	} else {
		f.small = append(f.small, b)
	}
}

// packet is a queue entry: segments [a, b) of a packet read, due at at.
type packet struct {
	at    time.Duration
	seq   uint64
	pb    *pbuf
	a, b  int
	bytes int // their size on the wire
}

func newPump(p *Pipe, from, to int, uso bool, origin time.Time, reorder bool, allow func([]byte) bool) *pump {
	ctx, cancel := context.WithCancel(context.Background())
	return &pump{pipe: p, from: from, to: to, uso: uso, direct: !noDirect, origin: origin, reorder: reorder, allow: allow,
		ch: make(chan []packet, chanBatches), ctx: ctx, cancel: cancel}
}

func (p *pump) stats() PipeStats {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.pipe.Stats
}

// start starts the pump's writer (the link's reader feeds it).
func (p *pump) start(wg *sync.WaitGroup, dir string) {
	p.wclock.run(wg, "link-write-"+dir, p.write)
}

// cpu is the pump's writer thread's CPU time so far.
func (p *pump) cpu() time.Duration { return p.wclock.cpu() }

func (p *pump) stop() { p.cancel() }

// reader is a direction's reading side, run by the link's reader thread
// (readloop.go): it admits each wire packet read to the pipe and hands
// the entries to the writer in batches (what one wake-up found, about
// maxBatch): one hand-over per batch, not per packet, when they come
// fast.
type reader struct {
	p     *pump
	free  readerFree
	batch []packet
	seq   uint64
	w     writer // for the writes the reader does itself
}

func (p *pump) newReader() *reader {
	r := &reader{p: p, free: readerFree{r: &p.free}}
	r.w.p = p
	r.batch = r.free.batch()
	return r
}

// flush hands the batch to the writer; false when the pump stops first.
// A batch all due by now, when the writer has written all it was handed
// (so that the order holds), the reader writes itself: at rate=unlimited
// without delay every packet, which then costs no hand-over and no
// wake-up of the writer's thread (on this VM a wake-up of a thread
// costs more than the read and the write together).
func (r *reader) flush() bool {
	if len(r.batch) == 0 {
		return true
	}
	p := r.p
	if p.direct && p.queued.Load() == 0 && r.due() {
		r.w.send(r.batch)
		p.directs.Add(1)
		clear(r.batch)
		r.batch = r.batch[:0]
		return true
	}
	p.queued.Add(int64(len(r.batch)))
	p.handed.Add(1)
	select {
	case r.p.ch <- r.batch:
		r.batch = r.free.batch()
		return true
	case <-r.p.ctx.Done():
		return false
	}
}

// due says whether every entry of the batch is due by now.
func (r *reader) due() bool {
	latest := r.batch[len(r.batch)-1].at // without reordering, due times only grow
	if r.p.reorder {
		for _, e := range r.batch {
			latest = max(latest, e.at)
		}
	}
	return latest <= time.Since(r.p.origin)
}

// admit takes the packet read into rb.b[:n] (virtio header first), a big
// buffer: each of its segments goes through the pipe on its own, and
// the segments of one packet that the pipe delivers at the same time
// stay one entry. A small packet is copied out, so that what waits in a
// queue holds no more than its size; a big one that goes on is handed
// over as it is, and kept reports so (the caller reads into another).
// ok is false when the pump stopped.
func (r *reader) admit(rb *pbuf, n int) (kept, ok bool) {
	p := r.p
	p.reads.Add(1)
	if n < vnetHdrLen {
		p.refused.Add(1)
		return false, true
	}
	pkt := rb.b[vnetHdrLen:n]
	sg, valid := parseSegs(parseVnet(rb.b), pkt)
	if !valid || !p.allow(pkt) {
		p.refused.Add(1)
		return false, true
	}
	if p.see != nil {
		p.see(pkt)
	}
	pb := rb
	small := n <= smallBufLen
	if small {
		pb = r.free.pbuf(false)
		copy(pb.b, rb.b[:n])
	}
	pb.n, pb.segs, pb.refs = n, sg, 0
	now := time.Since(p.origin)
	p.mu.Lock()
	for i := range sg.n {
		w := sg.wire(i)
		at, v := p.pipe.Admit(now, w)
		if v != Deliver {
			continue
		}
		if k := len(r.batch) - 1; k >= 0 && r.batch[k].pb == pb && r.batch[k].b == i && r.batch[k].at == at {
			r.batch[k].b++
			r.batch[k].bytes += w
			continue
		}
		r.seq++
		r.batch = append(r.batch, packet{at, r.seq, pb, i, i + 1, w})
		pb.refs++
	}
	p.mu.Unlock()
	if pb.refs == 0 {
		if small {
			r.free.keep(pb)
		}
		return false, true // a big one is read into again
	}
	// Only between packets: the writer may release pb once it has it.
	if len(r.batch) >= maxBatch && !r.flush() {
		return !small, false
	}
	return !small, true
}

const maxBatch = 64

// chanBatches is how many batches the reader can hand over ahead of the
// writer.
const chanBatches = 1 << 10

// write sends each packet at its time. It sleeps on its own OS thread
// with nanosleep and a 1 µs timer slack: the runtime's timers wake up to
// a millisecond late, which an emulated 1 ms RTT cannot afford. Without
// reordering the due times only grow, and a FIFO holds the packets;
// with it, a heap. What is due at a wake-up is written together (send).
func (p *pump) write() {
	_ = unix.Prctl(unix.PR_SET_TIMERSLACK, 1000, 0, 0, 0)
	w := &writer{p: p}
	var h pktHeap
	var fifo pktFIFO
	pending := func() int { return len(h) + fifo.len() }
	add := func(b []packet) {
		if p.reorder {
			for _, pkt := range b {
				heap.Push(&h, pkt)
			}
			clear(b) // holds no buffer once back with the reader
			w.batches = append(w.batches, b)
			return
		}
		fifo.push(b)
		clear(b)
		w.batches = append(w.batches, b)
	}
	var due []packet
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
		// The batches, copied out, go back to the reader now: while the
		// packets wait for their time (a delay of 10 ms is a thousand
		// packets at 100k/s) the reader would otherwise allocate more.
		p.free.put(&w.small, &w.big, &w.batches)
		if p.ctx.Err() != nil {
			return
		}
		now := time.Since(p.origin)
		due = due[:0]
		var next packet
		for pending() > 0 {
			if p.reorder {
				next = h[0]
			} else {
				next = fifo.peek()
			}
			if next.at > now {
				break
			}
			if p.reorder {
				heap.Pop(&h)
			} else {
				fifo.pop()
			}
			due = append(due, next)
		}
		if len(due) > 0 {
			w.send(due)
			p.queued.Add(-int64(len(due)))
			clear(due)
			continue
		}
		wait := next.at - now
		if p.reorder {
			// A packet due sooner may come in meanwhile.
			wait = min(wait, 200*time.Microsecond)
		}
		wait = min(wait, 20*time.Millisecond) // and see a Close in time
		ts := unix.NsecToTimespec(int64(wait))
		_ = unix.Nanosleep(&ts, nil)
	}
}

// writer is the write side's scratch space.
type writer struct {
	p     *pump
	hdr   [vnetHdrLen + 2*60]byte // a subrange's headers
	join  []byte                  // a UDP super-packet being built
	dgs   [][]byte
	iov   [2][]byte
	lateN int64
	lateS int64
	// Released since the last hand-back to the reader.
	small, big []*pbuf
	batches    [][]packet
}

// send writes the due entries in their order, each run of them that one
// write can carry at once: the adjacent segments of one super-packet,
// or whole datagrams of one UDP flow (joined into a UDP super-packet,
// which the receiving kernel splits into the same datagrams again).
func (w *writer) send(due []packet) {
	p := w.p
	for i := 0; i < len(due); {
		e := due[i]
		j := i + 1
		for j < len(due) && due[j].pb == e.pb && due[j].a == e.b {
			e.b = due[j].b
			j++
		}
		var err error
		if k := w.udpRun(due[i:]); k > 1 {
			j = i + k
			w.dgs = w.dgs[:0]
			for _, d := range due[i:j] {
				w.dgs = append(w.dgs, d.pb.pkt())
			}
			if w.join == nil {
				w.join = make([]byte, vnetHdrLen+maxIPLen)
			}
			_, err = unix.Write(p.to, joinUDP(w.join, w.dgs))
		} else if e.a == 0 && e.b == e.pb.segs.n {
			_, err = unix.Write(p.to, e.pb.b[:e.pb.n])
		} else {
			w.iov[0], w.iov[1] = e.pb.segs.subrange(w.hdr[:], e.pb.pkt(), e.a, e.b)
			_, err = unix.Writev(p.to, w.iov[:])
		}
		p.writes.Add(1)
		if err != nil {
			p.writeErr.Add(1)
		}
		now := time.Since(p.origin)
		var bytes int64
		for _, d := range due[i:j] {
			bytes += int64(d.bytes)
			n, late := int64(d.b-d.a), int64(now-d.at)
			w.lateN += n
			w.lateS += n * late
			for m := p.lateMax.Load(); late > m && !p.lateMax.CompareAndSwap(m, late); m = p.lateMax.Load() {
			}
			if d.pb.refs--; d.pb.refs == 0 {
				if d.pb.big {
					w.big = append(w.big, d.pb)
				} else {
					w.small = append(w.small, d.pb)
				}
			}
		}
		if err == nil {
			p.wrote.Add(bytes)
		}
		i = j
	}
	p.lateN.Add(w.lateN)
	p.lateSum.Add(w.lateS)
	w.lateN, w.lateS = 0, 0
	p.free.put(&w.small, &w.big, &w.batches)
}

// udpRun is how many entries from d[0] are whole UDP datagrams that one
// UDP super-packet can carry (0 or 1: none to join).
func (w *writer) udpRun(d []packet) int {
	const hl = 20 + 8
	first := d[0].pb
	if !w.p.uso || len(d) < 2 || first.segs.gso != gsoNone || first.segs.proto != protoUDP || first.segs.plen <= hl {
		return 0
	}
	fp := first.pkt()
	total := len(fp)
	k := 1
	for ; k < len(d) && k < maxUDPSegs; k++ {
		q := d[k].pb
		if q.segs.gso != gsoNone || d[k-1].pb.n != first.n || !udpJoinable(fp, q.pkt()) || total+q.segs.plen-hl > maxIPLen {
			break
		}
		total += q.segs.plen - hl
	}
	return k
}

// pktFIFO is the writer's queue when due times only grow.
type pktFIFO struct {
	q    []packet
	head int // q[:head] are gone
}

func (f *pktFIFO) len() int     { return len(f.q) - f.head }
func (f *pktFIFO) peek() packet { return f.q[f.head] }

func (f *pktFIFO) pop() {
	f.q[f.head] = packet{} // holds no buffer
	f.head++
}

func (f *pktFIFO) push(b []packet) {
	if f.head > 0 && f.head == len(f.q) {
		f.q, f.head = f.q[:0], 0
	} else if f.head >= 1024 && f.head*2 >= len(f.q) {
		// A queue that never empties (a flood into a delay) would
		// otherwise grow its array for as long as the flood lasts.
		n := copy(f.q, f.q[f.head:])
		clear(f.q[n:])
		f.q, f.head = f.q[:n], 0
	}
	f.q = append(f.q, b...)
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
