package kv

import (
	"os"
	"syscall"
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
