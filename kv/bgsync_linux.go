package kv

import (
	"errors"
	"fmt"
	"os"
	"sync/atomic"
	"syscall"
	"unsafe"

	"golang.org/x/sys/unix"
)

// ringSyncer runs everysec's once-a-second fsync on a kernel worker
// thread: an io_uring fsync request, forced async so that io_uring_enter
// only queues it for io-wq, with an eventfd that the goroutine asking
// waits on in Go's netpoller. That goroutine gives its P back for the
// whole fsync. Through f.Sync it kept the P (the runtime's monitor takes
// a P from a system call only on one of its ticks, 10 ms apart once it
// has found nothing to take for a while), so a server pinned to one CPU,
// one P, stalled its event loop for the fsync each second: 3–24 ms on
// this disk under SET load. redis-server fsyncs on a thread of its own
// (bio) for the same reason. The fsync itself is the same system call,
// on the same file, with the same result (io_uring's IORING_OP_FSYNC is
// vfs_fsync), so what everysec promises does not change.
type ringSyncer struct {
	ring int
	ev   *os.File // eventfd, non-blocking: reads park in the netpoller
	mem  [3][]byte
	// Into mem: the submission ring's tail, mask and index array, the
	// entries, the completion ring's head, tail, mask and entries.
	sqTail, sqMask *uint32
	sqArray        []byte
	sqes           []byte
	cqHead, cqTail *uint32
	cqMask         uint32
	cqes           []byte
	broken         bool // a submission failed: f.Sync from now on
}

// io_uring's ABI (include/uapi/linux/io_uring.h).
const (
	ringOpFsync        = 3      // IORING_OP_FSYNC
	ringSqeAsync       = 1 << 4 // IOSQE_ASYNC: straight to a worker, no inline try
	ringRegEventfd     = 4      // IORING_REGISTER_EVENTFD
	ringOffSQ          = 0
	ringOffCQ          = 0x8000000
	ringOffSQEs        = 0x10000000
	ringSqeSize        = 64
	ringCqeSize        = 16
	ringEntries        = 2
	ringUserData       = 0x77626673 // "wbfs", checked on completion
	ringSqeUserDataOff = 32
)

type sqOffsets struct {
	head, tail, mask, entries, flags, dropped, array, resv1 uint32
	userAddr                                                uint64
}

type cqOffsets struct {
	head, tail, mask, entries, overflow, cqes, flags, resv1 uint32
	userAddr                                                uint64
}

type ringParams struct {
	sqEntries, cqEntries, flags, sqThreadCPU, sqThreadIdle, features, wqFd uint32
	resv                                                                   [3]uint32
	sq                                                                     sqOffsets
	cq                                                                     cqOffsets
}

// newRingSyncer sets up a ring of two entries; an error when the kernel
// has no io_uring or refuses it (io_uring_disabled, seccomp): the caller
// keeps f.Sync.
func newRingSyncer() (*ringSyncer, error) {
	var p ringParams
	// io_uring_setup has no close-on-exec flag: as the standard
	// library's descriptors, set it before a fork can copy the ring.
	syscall.ForkLock.RLock()
	fd, _, e := unix.Syscall(unix.SYS_IO_URING_SETUP, ringEntries, uintptr(unsafe.Pointer(&p)), 0)
	if e == 0 {
		unix.CloseOnExec(int(fd))
	}
	syscall.ForkLock.RUnlock()
	if e != 0 {
		return nil, fmt.Errorf("io_uring_setup: %w", e)
	}
	u := &ringSyncer{ring: int(fd)}
	fail := func(what string, err error) (*ringSyncer, error) {
		u.close()
		return nil, fmt.Errorf("io_uring %s: %w", what, err)
	}
	var err error
	prot, flags := unix.PROT_READ|unix.PROT_WRITE, unix.MAP_SHARED|unix.MAP_POPULATE
	if u.mem[0], err = unix.Mmap(u.ring, ringOffSQ, int(p.sq.array+p.sqEntries*4), prot, flags); err != nil {
		return fail("mmap", err)
	}
	if u.mem[1], err = unix.Mmap(u.ring, ringOffCQ, int(p.cq.cqes+p.cqEntries*ringCqeSize), prot, flags); err != nil {
		return fail("mmap", err)
	}
	if u.mem[2], err = unix.Mmap(u.ring, ringOffSQEs, int(p.sqEntries*ringSqeSize), prot, flags); err != nil {
		return fail("mmap", err)
	}
	sq, cq := u.mem[0], u.mem[1]
	u.sqTail = (*uint32)(unsafe.Pointer(&sq[p.sq.tail]))
	u.sqMask = (*uint32)(unsafe.Pointer(&sq[p.sq.mask]))
	u.sqArray = sq[p.sq.array : p.sq.array+p.sqEntries*4]
	u.sqes = u.mem[2]
	u.cqHead = (*uint32)(unsafe.Pointer(&cq[p.cq.head]))
	u.cqTail = (*uint32)(unsafe.Pointer(&cq[p.cq.tail]))
	u.cqMask = *(*uint32)(unsafe.Pointer(&cq[p.cq.mask]))
	u.cqes = cq[p.cq.cqes : p.cq.cqes+p.cqEntries*ringCqeSize]
	efd, err := unix.Eventfd(0, unix.EFD_NONBLOCK|unix.EFD_CLOEXEC)
	if err != nil {
		return fail("eventfd", err)
	}
	u.ev = os.NewFile(uintptr(efd), "aof-fsync-eventfd")
	efd32 := int32(efd)
	if _, _, e := unix.Syscall6(unix.SYS_IO_URING_REGISTER, uintptr(u.ring), ringRegEventfd, uintptr(unsafe.Pointer(&efd32)), 1, 0, 0); e != 0 {
		return fail("register eventfd", e)
	}
	return u, nil
}

// errRingBroken sends the caller back to f.Sync.
var errRingBroken = errors.New("io_uring fsync unavailable")

// fsync fsyncs fd on a worker thread and waits without holding a P. One
// caller at a time (the AOF's tick goroutine). errRingBroken when the
// request could not be submitted: nothing was fsynced.
func (u *ringSyncer) fsync(fd int) error {
	if u.broken {
		return errRingBroken
	}
	tail := atomic.LoadUint32(u.sqTail) // only this goroutine submits
	i := tail & atomic.LoadUint32(u.sqMask)
	sqe := u.sqes[i*ringSqeSize : (i+1)*ringSqeSize]
	clear(sqe)
	sqe[0], sqe[1] = ringOpFsync, ringSqeAsync
	*(*int32)(unsafe.Pointer(&sqe[4])) = int32(fd)
	*(*uint64)(unsafe.Pointer(&sqe[ringSqeUserDataOff])) = ringUserData
	*(*uint32)(unsafe.Pointer(&u.sqArray[i*4])) = i
	atomic.StoreUint32(u.sqTail, tail+1)
	for {
		// Queueing for a worker does not block: a raw call, as the
		// event loop's (kv/resp), which keeps the monitor thread away.
		n, _, e := unix.RawSyscall6(unix.SYS_IO_URING_ENTER, uintptr(u.ring), 1, 0, 0, 0, 0)
		if e == unix.EINTR {
			continue
		}
		if e != 0 || n != 1 {
			// The entry may still be in the ring: never use it again.
			u.broken = true
			return errRingBroken
		}
		break
	}
	var buf [8]byte
	for {
		head := atomic.LoadUint32(u.cqHead)
		if head != atomic.LoadUint32(u.cqTail) {
			cqe := u.cqes[(head&u.cqMask)*ringCqeSize:]
			data := *(*uint64)(unsafe.Pointer(&cqe[0]))
			res := *(*int32)(unsafe.Pointer(&cqe[8]))
			atomic.StoreUint32(u.cqHead, head+1)
			if data != ringUserData {
				u.broken = true
				return fmt.Errorf("io_uring: completion of an unknown request %#x", data)
			}
			if res < 0 {
				return syscall.Errno(-res)
			}
			return nil
		}
		// Parks in the netpoller until the kernel posts the completion
		// (an earlier request's leftover count just loops once more).
		if _, err := u.ev.Read(buf[:]); err != nil {
			u.broken = true
			return fmt.Errorf("io_uring: waiting for the fsync: %w", err)
		}
	}
}

func (u *ringSyncer) close() {
	for i, m := range u.mem {
		if m != nil {
			unix.Munmap(m)
			u.mem[i] = nil
		}
	}
	if u.ev != nil {
		u.ev.Close()
	}
	unix.Close(u.ring)
}

// backgroundSync is everysec's fsync of f: on a kernel worker thread
// when f is an *os.File and io_uring works, else f.Sync.
func (a *aof) backgroundSync(f File) error {
	of, ok := f.(*os.File)
	if !ok || a.ringOff {
		return f.Sync()
	}
	if a.ring == nil {
		r, err := newRingSyncer()
		if err != nil {
			a.ringOff = true
			return f.Sync()
		}
		a.ring = r
	}
	rc, err := of.SyscallConn()
	if err != nil {
		return err
	}
	// Control keeps the descriptor open until the worker is done with it
	// (a Close meanwhile closes it after).
	var serr error
	if err := rc.Control(func(fd uintptr) { serr = a.ring.fsync(int(fd)) }); err != nil {
		return err
	}
	if serr == errRingBroken {
		return f.Sync()
	}
	if ringRefused(serr) {
		// The ring would not fsync (a kernel or a filter that refuses the
		// operation); the file's own fsync says whether the file can.
		// Not after an I/O error: that one is reported once per open
		// file, and a second fsync would find it consumed.
		a.ringOff = true
		return f.Sync()
	}
	if serr != nil {
		return &os.PathError{Op: "fsync", Path: of.Name(), Err: serr}
	}
	return nil
}

// ringRefused: errors that mean the request was refused, not that an
// fsync of the file failed.
func ringRefused(err error) bool {
	var e syscall.Errno
	if !errors.As(err, &e) {
		return false
	}
	switch e {
	case unix.EINVAL, unix.EOPNOTSUPP, unix.ENOSYS, unix.EPERM, unix.EACCES:
		return true
	}
	return false
}

func (a *aof) closeRing() {
	if a.ring != nil {
		a.ring.close()
		a.ring = nil
	}
}
