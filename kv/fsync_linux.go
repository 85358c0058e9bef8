package kv

import (
	"os"
	"syscall"
	"unsafe"
)

// syncHolding fsyncs f without letting go of the CPU, as redis-server's
// blocking fsync under appendfsync always does: the goroutines of this
// process wait (on GOMAXPROCS 1; the other Ps run on), the connections
// that become readable meanwhile are read after it, together, into the
// next batch. Through the runtime's syscall path (f.Sync) the scheduler
// hands the P to another thread during the fsync and the fsyncing
// goroutine queues behind the others when it returns: three or four
// thread switches per fsync and smaller batches (issue 41, docs/kv.md).
// Fakes in tests that are not *os.File get their own Sync.
func syncHolding(f File) error {
	of, ok := f.(*os.File)
	if !ok {
		return f.Sync()
	}
	rc, err := of.SyscallConn()
	if err != nil {
		return err
	}
	var errno syscall.Errno
	if err := rc.Control(func(fd uintptr) {
		for {
			if _, _, errno = syscall.RawSyscall(syscall.SYS_FSYNC, fd, 0, 0); errno != syscall.EINTR {
				return
			}
		}
	}); err != nil {
		return err
	}
	if errno != 0 {
		return &os.PathError{Op: "fsync", Path: of.Name(), Err: errno}
	}
	return nil
}

// writeHolding is f.Write without letting go of the CPU, as the fsync
// above and redis-server's write of its AOF in beforeSleep: a batch's
// write to the page cache takes microseconds, and through the runtime's
// syscall path the monitor thread took the P from the ones it found in
// progress, handed it to another thread and then kept polling every
// 20 µs (kv/resp's loop makes its socket calls raw for the same reason).
// A write the kernel makes wait (dirty-page throttling) holds this P
// meanwhile, as it holds redis-server's one thread. Short writes are
// continued, EINTR retried; fakes in tests get their own Write.
func writeHolding(f File, b []byte) (int, error) {
	of, ok := f.(*os.File)
	if !ok {
		return f.Write(b)
	}
	rc, err := of.SyscallConn()
	if err != nil {
		return 0, err
	}
	n := 0
	var errno syscall.Errno
	if err := rc.Control(func(fd uintptr) {
		for n < len(b) {
			w, _, e := syscall.RawSyscall(syscall.SYS_WRITE, fd, uintptr(unsafe.Pointer(&b[n])), uintptr(len(b)-n))
			switch {
			case e == syscall.EINTR:
				continue
			case e != 0:
				errno = e
				return
			case w == 0:
				return // no progress: reported as a short write
			}
			n += int(w)
		}
	}); err != nil {
		return n, err
	}
	if errno != 0 {
		return n, &os.PathError{Op: "write", Path: of.Name(), Err: errno}
	}
	return n, nil
}
