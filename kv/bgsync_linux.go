//go:build linux && (amd64 || arm64)

package kv

import (
	"errors"
	"fmt"
	"os"
	"sync/atomic"
	"syscall"

	"golang.org/x/sys/unix"

	"github.com/wirebench/wirebench/internal/uring"
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
	ring   *uring.Ring   // internal/uring's, set up without an owning thread
	ev     *os.File      // eventfd, non-blocking: reads park in the netpoller
	done   atomic.Uint32 // completions taken
	broken bool          // a submission failed: f.Sync from now on
}

// ringUserData marks the fsync's completion, checked on arrival.
const ringUserData = 0x77626673 // "wbfs"

// newRingSyncer sets up a ring of two entries; an error when the kernel
// has no io_uring or refuses it (io_uring_disabled, seccomp): the caller
// keeps f.Sync.
func newRingSyncer() (*ringSyncer, error) {
	r, err := uring.NewShared(2)
	if err != nil {
		return nil, err
	}
	efd, err := unix.Eventfd(0, unix.EFD_NONBLOCK|unix.EFD_CLOEXEC)
	if err != nil {
		r.Close()
		return nil, fmt.Errorf("io_uring eventfd: %w", err)
	}
	u := &ringSyncer{ring: r, ev: os.NewFile(uintptr(efd), "aof-fsync-eventfd")}
	if err := r.RegisterEventfd(efd); err != nil {
		u.close()
		return nil, err
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
	sqe := u.ring.SQE()
	if sqe == nil { // an entry the kernel never took: see below
		u.broken = true
		return errRingBroken
	}
	sqe.Opcode, sqe.Flags, sqe.Fd, sqe.UserData = uring.OpFsync, uring.SqeAsync, int32(fd), ringUserData
	// Queueing for a worker does not block: a raw call, as the event
	// loop's (kv/resp), which keeps the monitor thread away.
	if _, err := u.ring.Submit(); err != nil {
		// The entry may still be in the ring: never use it again.
		u.broken = true
		return errRingBroken
	}
	var buf [8]byte
	for {
		var got bool
		var data uint64
		var res int32
		u.ring.Completions(func(c *uring.CQE) {
			// One request in flight: at most one completion.
			got, data, res = true, c.UserData, c.Res
		})
		if got {
			u.done.Add(1)
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
	if u.ev != nil {
		u.ev.Close()
	}
	u.ring.Close()
}

// backgroundSync is everysec's fsync of f: on a kernel worker thread
// when f is an *os.File and io_uring works, else f.Sync.
func (a *aof) backgroundSync(f File) error { return ringSync(f, &a.ring, &a.ringOff) }

// rewriteSync is the rewrite's fsync of its file and of the directory,
// through a ring of its own (the rewrite runs beside everysec's fsync):
// a rewrite's fsync of megabytes took the one P for as long.
func (a *aof) rewriteSync(f File) error { return ringSync(f, &a.rwRing, &a.rwRingOff) }

// ringSync fsyncs f through *ring, set up on first use; *off once the
// kernel refused it. One caller at a time per ring.
func ringSync(f File, ring **ringSyncer, off *bool) error {
	of, ok := f.(*os.File)
	if !ok || *off {
		return f.Sync()
	}
	if *ring == nil {
		r, err := newRingSyncer()
		if err != nil {
			*off = true
			return f.Sync()
		}
		*ring = r
	}
	rc, err := of.SyscallConn()
	if err != nil {
		return err
	}
	// Control keeps the descriptor open until the worker is done with it
	// (a Close meanwhile closes it after).
	var serr error
	if err := rc.Control(func(fd uintptr) { serr = (*ring).fsync(int(fd)) }); err != nil {
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
		*off = true
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
	for _, r := range []**ringSyncer{&a.ring, &a.rwRing} {
		if *r != nil {
			(*r).close()
			*r = nil
		}
	}
}
