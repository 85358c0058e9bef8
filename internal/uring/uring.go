//go:build linux && (amd64 || arm64)

// Package uring is a minimal io_uring. For the load client's event loop
// and the link relay's TUN readers: one ring per loop goroutine, set up
// SINGLE_ISSUER and DEFER_TASKRUN (the kernel does a completion's work
// — the receive itself — inside the loop's own io_uring_enter, not in an
// interrupt of it), one ring of
// provided buffers for multishot receives, and io_uring_enter through
// RawSyscall, as the epoll loop calls epoll_pwait (load/h1loop.go).
//
// Hand-written with golang.org/x/sys/unix: the rings are three mappings
// of the ring's descriptor, laid out by the offsets the kernel returns
// in io_uring_params (io_uring_setup(2), include/uapi/linux/io_uring.h):
//
//	SQ ring  (IORING_OFF_SQ_RING): head tail mask entries flags dropped array[entries]u32
//	CQ ring  (same mapping with IORING_FEAT_SINGLE_MMAP): head tail mask entries overflow cqes[entries]
//	SQEs     (IORING_OFF_SQES):    sqes[entries], 64 bytes each
//
// The kernel moves the SQ head and the CQ tail; we move the SQ tail and
// the CQ head, each with a release store after the entries it publishes.
// No SQPOLL thread: every system call is the loop's own, so its CPU is the
// process's (a SQPOLL thread's would be too, but it would spin on another
// CPU and hide the cost from a per-CPU reading).
//
// Not safe for concurrent use: one goroutine owns a Ring, locked to its
// OS thread (runtime.LockOSThread) before New — with SINGLE_ISSUER the
// kernel refuses (EEXIST) a submission or registration from any thread
// but the one that created the ring. NewShared's ring has neither flag:
// any thread may submit to it (one at a time: the caller serialises), and
// completions are posted by whoever finishes the request, io_uring's
// worker threads included, so a caller can wait for them elsewhere (an
// eventfd in Go's netpoller: RegisterEventfd).
package uring

import (
	"errors"
	"fmt"
	"sync/atomic"
	"syscall"
	"unsafe"

	"golang.org/x/sys/unix"
)

// ErrUnavailable wraps every reason io_uring cannot be used here (kernel
// too old, disabled by /proc/sys/kernel/io_uring_disabled, seccomp).
var ErrUnavailable = errors.New("io_uring unavailable")

// Opcodes, SQE and CQE flags used (include/uapi/linux/io_uring.h).
const (
	OpNop         = 0
	OpFsync       = 3
	OpAsyncCancel = 14 // cancels the request whose user data is the SQE's Addr
	OpConnect     = 16
	OpClose       = 19
	OpSend        = 26
	OpRecv        = 27
	// OpReadMultishot reads from a pollable file into a provided buffer
	// each time it has data, a completion each, until it fails or runs
	// out of buffers (Linux 6.7).
	OpReadMultishot = 49

	SqeFixedFile     = 1 << 0
	SqeIOLink        = 1 << 2
	SqeAsync         = 1 << 4 // straight to a worker thread, no inline try
	SqeBufferSelect  = 1 << 5
	SqeCQESkipSucces = 1 << 6

	RecvMultishot = 1 << 1 // in the SQE's ioprio

	CQEFBuffer = 1 << 0
	CQEFMore   = 1 << 1

	setupSQPoll       = 1 << 1
	setupSQAff        = 1 << 2
	setupCQSize       = 1 << 3
	setupSubmitAll    = 1 << 7
	setupSingleIssuer = 1 << 12
	setupDeferTaskrun = 1 << 13

	enterGetEvents = 1 << 0
	enterSQWakeup  = 1 << 1
	sqNeedWakeup   = 1 << 0 // in the SQ ring's flags
	enterExtArg    = 1 << 3

	featSingleMmap = 1 << 0
	featExtArg     = 1 << 8
	featCQESkip    = 1 << 11
	featMinTimeout = 1 << 15

	offSQRing = 0
	offSQEs   = 0x10000000

	registerFiles    = 2
	registerEventfd  = 4
	registerRingFds  = 20
	registerPbufRing = 22

	enterRegisteredRing = 1 << 4
)

// SQE is a submission queue entry (64 bytes).
type SQE struct {
	Opcode   uint8
	Flags    uint8
	Ioprio   uint16
	Fd       int32
	Off      uint64
	Addr     uint64
	Len      uint32
	OpFlags  uint32
	UserData uint64
	BufIndex uint16 // or buffer group with SqeBufferSelect
	_        uint16
	_        int32
	_        [2]uint64
}

// CQE is a completion queue entry (16 bytes).
type CQE struct {
	UserData uint64
	Res      int32
	Flags    uint32
}

type sqOffsets struct {
	head, tail, ringMask, ringEntries, flags, dropped, array, resv1 uint32
	userAddr                                                        uint64
}

type cqOffsets struct {
	head, tail, ringMask, ringEntries, overflow, cqes, flags, resv1 uint32
	userAddr                                                        uint64
}

type params struct {
	sqEntries, cqEntries, flags, sqThreadCPU, sqThreadIdle, features, wqFd uint32
	resv                                                                   [3]uint32
	sq                                                                     sqOffsets
	cq                                                                     cqOffsets
}

type geteventsArg struct {
	sigmask   uint64
	sigmaskSz uint32
	minWaitUS uint32 // IORING_FEAT_MIN_TIMEOUT (6.12)
	ts        uint64
}

// Ring is one io_uring.
type Ring struct {
	fd         int
	ringMem    []byte
	sqeMem     []byte
	sqHead     *uint32
	sqTail     *uint32
	sqMask     uint32
	sqes       []SQE
	cqHead     *uint32
	cqTail     *uint32
	cqMask     uint32
	cqes       []CQE
	tail       uint32 // our SQ tail, published by Enter
	pending    uint32 // SQEs not yet submitted
	ts         unix.Timespec
	arg        geteventsArg
	bufRings   []*BufRing
	enterFd    int     // fd, or its registered index (RegisterRing)
	enterFl    uintptr // enterRegisteredRing once registered
	sqFlags    *uint32 // with SQPOLL: the kernel thread's state
	sqFlagsOff uint32
	features   uint32
}

// New sets up a ring of at least entries SQEs and twice as many CQEs,
// owned by the calling OS thread (see the package comment).
func New(entries uint32) (*Ring, error) {
	return setup(params{flags: setupCQSize | setupSubmitAll | setupSingleIssuer | setupDeferTaskrun, cqEntries: 2 * entries}, entries, featExtArg|featCQESkip)
}

// NewShared sets up a ring of at least entries SQEs that no thread owns
// (see the package comment): for requests that a worker thread completes
// (SqeAsync) while the submitter waits on RegisterEventfd's descriptor.
// It asks for no feature past Linux 5.4's.
func NewShared(entries uint32) (*Ring, error) {
	return setup(params{}, entries, 0)
}

// NewSQPoll sets up a ring whose submissions a kernel thread of the
// process (iou-sqp-PID) polls for, pinned to cpu and sleeping after
// idleMS without work: for measuring what that thread costs (its CPU is
// the process's: bench/uringka -sqpoll), not for the client.
func NewSQPoll(entries, cpu, idleMS uint32) (*Ring, error) {
	p := params{flags: setupCQSize | setupSubmitAll | setupSQPoll | setupSQAff, cqEntries: 2 * entries, sqThreadCPU: cpu, sqThreadIdle: idleMS}
	r, err := setup(p, entries, featExtArg|featCQESkip)
	if err == nil {
		r.sqFlags = (*uint32)(unsafe.Add(unsafe.Pointer(&r.ringMem[0]), r.sqFlagsOff))
	}
	return r, err
}

// setup makes the ring and maps it; need is the features (IORING_FEAT_*)
// the caller relies on besides the single mapping of both rings.
func setup(p params, entries, need uint32) (*Ring, error) {
	// The kernel opens the ring's descriptor close-on-exec.
	fd, _, e := unix.RawSyscall(unix.SYS_IO_URING_SETUP, uintptr(entries), uintptr(unsafe.Pointer(&p)), 0)
	if e != 0 {
		return nil, fmt.Errorf("%w: io_uring_setup: %v", ErrUnavailable, e)
	}
	r := &Ring{fd: int(fd), enterFd: int(fd), features: p.features}
	need |= featSingleMmap
	if p.features&need != need {
		r.Close()
		return nil, fmt.Errorf("%w: kernel lacks features %#x", ErrUnavailable, need&^p.features)
	}
	sqSize := p.sq.array + p.sqEntries*4
	cqSize := p.cq.cqes + p.cqEntries*uint32(unsafe.Sizeof(CQE{}))
	size := max(sqSize, cqSize)
	var err error
	if r.ringMem, err = unix.Mmap(r.fd, offSQRing, int(size), unix.PROT_READ|unix.PROT_WRITE, unix.MAP_SHARED|unix.MAP_POPULATE); err != nil {
		r.Close()
		return nil, fmt.Errorf("%w: mmap rings: %v", ErrUnavailable, err)
	}
	if r.sqeMem, err = unix.Mmap(r.fd, offSQEs, int(p.sqEntries)*64, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_SHARED|unix.MAP_POPULATE); err != nil {
		r.Close()
		return nil, fmt.Errorf("%w: mmap sqes: %v", ErrUnavailable, err)
	}
	base := unsafe.Pointer(&r.ringMem[0])
	u32 := func(off uint32) *uint32 { return (*uint32)(unsafe.Add(base, off)) }
	r.sqHead, r.sqTail, r.sqMask = u32(p.sq.head), u32(p.sq.tail), *u32(p.sq.ringMask)
	r.sqFlagsOff = p.sq.flags
	r.cqHead, r.cqTail, r.cqMask = u32(p.cq.head), u32(p.cq.tail), *u32(p.cq.ringMask)
	// The SQ array maps ring slots to SQEs; identity, set once.
	arr := unsafe.Slice(u32(p.sq.array), p.sqEntries)
	for i := range arr {
		arr[i] = uint32(i)
	}
	r.sqes = unsafe.Slice((*SQE)(unsafe.Pointer(&r.sqeMem[0])), p.sqEntries)
	r.cqes = unsafe.Slice((*CQE)(unsafe.Add(base, p.cq.cqes)), p.cqEntries)
	r.tail = atomic.LoadUint32(r.sqTail)
	r.arg.ts = uint64(uintptr(unsafe.Pointer(&r.ts)))
	return r, nil
}

// Close releases the ring (and its buffer rings' memory).
func (r *Ring) Close() error {
	for _, b := range r.bufRings {
		unix.Munmap(b.mem)
	}
	r.bufRings = nil
	if r.sqeMem != nil {
		unix.Munmap(r.sqeMem)
		r.sqeMem = nil
	}
	if r.ringMem != nil {
		unix.Munmap(r.ringMem)
		r.ringMem = nil
	}
	if r.fd >= 0 {
		unix.Close(r.fd)
		r.fd = -1
	}
	return nil
}

// SQE returns the next free submission entry, zeroed, or nil when the
// queue is full (call Enter to submit and retry).
func (r *Ring) SQE() *SQE {
	if r.tail-atomic.LoadUint32(r.sqHead) > r.sqMask {
		return nil
	}
	s := &r.sqes[r.tail&r.sqMask]
	*s = SQE{}
	r.tail++
	r.pending++
	return s
}

// SetMinWait makes a wait for n completions return after us
// microseconds with fewer, if at least one is ready (0: wait for n).
// It needs Linux 6.12 (IORING_FEAT_MIN_TIMEOUT).
func (r *Ring) SetMinWait(us uint32) error {
	if us > 0 && r.features&featMinTimeout == 0 {
		return fmt.Errorf("%w: no minimum wait before Linux 6.12", ErrUnavailable)
	}
	r.arg.minWaitUS = us
	return nil
}

// Pending is how many SQEs wait for Enter.
func (r *Ring) Pending() uint32 { return r.pending }

// Enter submits the pending SQEs and, if wait > 0, waits until wait
// completions are ready or timeout (ns) passes. It blocks through
// RawSyscall: the caller holds its P, as the epoll loop does, so timeout
// must be short. EINTR, ETIME and EBUSY (completions to reap first) are
// not errors.
func (r *Ring) Enter(wait uint32, timeoutNS int64) error {
	return r.enter(wait, timeoutNS, false)
}

// EnterBlocking is Enter through Syscall: the Go scheduler hands the
// caller's P to other goroutines while it waits, so timeoutNS may be
// long (a thread that waits for packets, not a loop that owns its P).
func (r *Ring) EnterBlocking(wait uint32, timeoutNS int64) error {
	return r.enter(wait, timeoutNS, true)
}

func (r *Ring) enter(wait uint32, timeoutNS int64, blocking bool) error {
	atomic.StoreUint32(r.sqTail, r.tail)
	submit := r.pending
	var flags uintptr
	if r.sqFlags != nil { // the kernel thread submits; wake it if it sleeps
		submit, r.pending = 0, 0
		if atomic.LoadUint32(r.sqFlags)&sqNeedWakeup != 0 {
			flags |= enterSQWakeup
		}
		if wait == 0 && flags == 0 {
			return nil
		}
	}
	var argp, argsz uintptr
	if wait > 0 {
		flags |= enterGetEvents | enterExtArg
		r.ts = unix.NsecToTimespec(timeoutNS)
		argp, argsz = uintptr(unsafe.Pointer(&r.arg)), unsafe.Sizeof(r.arg)
	}
	var n uintptr
	var e syscall.Errno
	if blocking {
		n, _, e = unix.Syscall6(unix.SYS_IO_URING_ENTER, uintptr(r.enterFd), uintptr(submit), uintptr(wait), flags|r.enterFl, argp, argsz)
	} else {
		n, _, e = unix.RawSyscall6(unix.SYS_IO_URING_ENTER, uintptr(r.enterFd), uintptr(submit), uintptr(wait), flags|r.enterFl, argp, argsz)
	}
	if e == 0 || n > 0 {
		r.pending -= min(uint32(n), r.pending)
	}
	switch e {
	case 0, unix.EINTR, unix.ETIME, unix.EBUSY, unix.EAGAIN:
		return nil
	}
	return fmt.Errorf("io_uring_enter: %w", syscall.Errno(e))
}

// Poll runs, without waiting, the completions' work that waits for the
// owner (with DEFER_TASKRUN: a multishot read's next reads), and says
// whether completions are ready: a system call, no sleep, for an owner
// that spins a little before it sleeps in Enter. It submits nothing.
func (r *Ring) Poll() bool {
	_, _, _ = unix.RawSyscall6(unix.SYS_IO_URING_ENTER, uintptr(r.enterFd), 0, 0, enterGetEvents|r.enterFl, 0, 0)
	return atomic.LoadUint32(r.cqTail) != *r.cqHead
}

// Submit submits the pending SQEs without waiting, retrying EINTR, and
// returns how many the kernel took: fewer than Pending was before, with
// an error, when it refused some (they stay in the ring).
func (r *Ring) Submit() (int, error) {
	atomic.StoreUint32(r.sqTail, r.tail)
	for {
		n, _, e := unix.RawSyscall6(unix.SYS_IO_URING_ENTER, uintptr(r.enterFd), uintptr(r.pending), 0, r.enterFl, 0, 0)
		if e == unix.EINTR {
			continue
		}
		if e != 0 {
			return 0, fmt.Errorf("io_uring_enter: %w", e)
		}
		r.pending -= min(uint32(n), r.pending)
		if r.pending > 0 {
			return int(n), fmt.Errorf("io_uring_enter: %d of %d entries submitted", n, int(n)+int(r.pending))
		}
		return int(n), nil
	}
}

// RegisterEventfd makes the kernel signal fd (an eventfd) on each
// completion it posts (IORING_REGISTER_EVENTFD).
func (r *Ring) RegisterEventfd(fd int) error {
	fd32 := int32(fd)
	if _, _, e := unix.RawSyscall6(unix.SYS_IO_URING_REGISTER, uintptr(r.fd), registerEventfd, uintptr(unsafe.Pointer(&fd32)), 1, 0, 0); e != 0 {
		return fmt.Errorf("uring: register eventfd: %w", e)
	}
	return nil
}

// RegisterRing registers the ring's own descriptor (IORING_REGISTER_RING_FDS),
// so that Enter skips looking it up.
func (r *Ring) RegisterRing() error {
	up := struct {
		offset, resv uint32
		data         uint64
	}{offset: ^uint32(0), data: uint64(r.fd)}
	if _, _, e := unix.RawSyscall6(unix.SYS_IO_URING_REGISTER, uintptr(r.fd), registerRingFds, uintptr(unsafe.Pointer(&up)), 1, 0, 0); e != 0 {
		return fmt.Errorf("uring: register ring fd: %w", e)
	}
	r.enterFd, r.enterFl = int(up.offset), enterRegisteredRing
	return nil
}

// RegisterFiles registers fds (IORING_REGISTER_FILES): an SQE with
// SqeFixedFile names one by its index.
func (r *Ring) RegisterFiles(fds []int32) error {
	if _, _, e := unix.RawSyscall6(unix.SYS_IO_URING_REGISTER, uintptr(r.fd), registerFiles, uintptr(unsafe.Pointer(&fds[0])), uintptr(len(fds)), 0, 0); e != 0 {
		return fmt.Errorf("uring: register files: %w", e)
	}
	return nil
}

// Completions calls f on each ready CQE in order, then frees them.
func (r *Ring) Completions(f func(*CQE)) int {
	head := *r.cqHead // only we move it
	tail := atomic.LoadUint32(r.cqTail)
	for h := head; h != tail; h++ {
		f(&r.cqes[h&r.cqMask])
	}
	atomic.StoreUint32(r.cqHead, tail)
	return int(tail - head)
}

// BufRing is a ring of provided buffers (IORING_REGISTER_PBUF_RING): the
// kernel takes one for each multishot receive completion and names it in
// the CQE; Give hands it back.
type BufRing struct {
	mem   []byte // ring entries, then the buffers
	ents  []bufEnt
	mask  uint16
	size  int
	bufs  []byte
	local uint16
}

type bufEnt struct {
	addr uint64
	len  uint32
	bid  uint16
	resv uint16
}

type bufReg struct {
	ringAddr    uint64
	ringEntries uint32
	bgid        uint16
	pad         uint16
	resv        [3]uint64
}

// NewBufRing registers n (a power of two ≤ 32768) buffers of size bytes
// as buffer group bgid.
func (r *Ring) NewBufRing(bgid uint16, n, size int) (*BufRing, error) {
	b, err := r.newBufRing(bgid, n, size)
	if err != nil {
		return nil, err
	}
	for i := range n {
		b.add(uint16(i))
	}
	b.Publish()
	return b, nil
}

// NewBufSlots registers a buffer group bgid of n slots (a power of two
// ≤ 32768) with no memory of its own: GiveBuf hands the kernel the
// caller's buffers, one slot at a time.
func (r *Ring) NewBufSlots(bgid uint16, n int) (*BufRing, error) {
	return r.newBufRing(bgid, n, 0)
}

func (r *Ring) newBufRing(bgid uint16, n, size int) (*BufRing, error) {
	if n <= 0 || n > 1<<15 || n&(n-1) != 0 {
		return nil, fmt.Errorf("uring: buffer ring of %d entries: not a power of two up to 32768", n)
	}
	// The entries get pages of their own: the kernel pins the ring's
	// pages (sharing one with the buffers, registration failed, EEXIST).
	page := unix.Getpagesize()
	ringBytes := (n*int(unsafe.Sizeof(bufEnt{})) + page - 1) / page * page
	mem, err := unix.Mmap(-1, 0, ringBytes+n*size, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_PRIVATE|unix.MAP_ANONYMOUS|unix.MAP_POPULATE)
	if err != nil {
		return nil, fmt.Errorf("uring: buffer ring: %w", err)
	}
	b := &BufRing{mem: mem, mask: uint16(n - 1), size: size, bufs: mem[ringBytes:]}
	b.ents = unsafe.Slice((*bufEnt)(unsafe.Pointer(&mem[0])), n)
	reg := bufReg{ringAddr: uint64(uintptr(unsafe.Pointer(&mem[0]))), ringEntries: uint32(n), bgid: bgid}
	if _, _, e := unix.RawSyscall6(unix.SYS_IO_URING_REGISTER, uintptr(r.fd), registerPbufRing, uintptr(unsafe.Pointer(&reg)), 1, 0, 0); e != 0 {
		unix.Munmap(mem)
		return nil, fmt.Errorf("%w: register buffer ring: %v", ErrUnavailable, e)
	}
	r.bufRings = append(r.bufRings, b)
	return b, nil
}

// Buf is buffer bid's first n bytes.
func (b *BufRing) Buf(bid uint16, n int) []byte {
	off := int(bid) * b.size
	return b.bufs[off : off+n : off+b.size]
}

// Give hands buffer bid back; Publish makes the given buffers visible.
func (b *BufRing) Give(bid uint16) { b.add(bid) }

func (b *BufRing) add(bid uint16) {
	b.addBuf(bid, b.bufs[int(bid)*b.size:][:b.size])
}

// GiveBuf hands the kernel p as slot bid's buffer (a ring of
// NewBufSlots); Publish makes it visible. The kernel writes into p
// when a read takes it, until its completion names bid: p must stay
// referenced (and so in place) until then.
func (b *BufRing) GiveBuf(bid uint16, p []byte) { b.addBuf(bid, p) }

func (b *BufRing) addBuf(bid uint16, p []byte) {
	e := &b.ents[b.local&b.mask]
	// The tail lives in entry 0's resv: write the other fields only.
	e.addr = uint64(uintptr(unsafe.Pointer(&p[0])))
	e.len = uint32(len(p))
	e.bid = bid
	b.local++
}

// Publish stores the tail with release order after the entries it
// covers. Go has no 16-bit atomic store: the tail is the high half of the
// 32-bit word it shares with entry 0's bid (little-endian), which only we
// write.
func (b *BufRing) Publish() {
	w := (*uint32)(unsafe.Pointer(&b.ents[0].bid))
	atomic.StoreUint32(w, uint32(b.local)<<16|uint32(b.ents[0].bid))
}
