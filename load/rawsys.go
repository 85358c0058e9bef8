package load

import (
	"syscall"
	"unsafe"

	"golang.org/x/sys/unix"
)

// readNB and writeNB are read(2) and write(2) on a non-blocking socket
// without telling the Go runtime that a syscall is in progress.
//
// Why: the runtime's sysmon takes the P away from a goroutine that has
// been in a syscall for 20 µs and hands it to another thread; write(2) on
// loopback TCP delivers the segment to the server inside the call and
// often takes that long, so every request risked a thread hand-off
// (strace: futex and tens of thousands of nanosleep per run). On a
// non-blocking socket these calls never block, which is the case
// RawSyscall is for.
func readNB(fd int, p []byte) (int, error) {
	if len(p) == 0 {
		return 0, nil
	}
	n, _, e := unix.RawSyscall(unix.SYS_READ, uintptr(fd), uintptr(unsafe.Pointer(&p[0])), uintptr(len(p)))
	if e != 0 {
		return -1, errnoErr(e)
	}
	return int(n), nil
}

func writeNB(fd int, p []byte) (int, error) {
	if len(p) == 0 {
		return 0, nil
	}
	n, _, e := unix.RawSyscall(unix.SYS_WRITE, uintptr(fd), uintptr(unsafe.Pointer(&p[0])), uintptr(len(p)))
	if e != 0 {
		return -1, errnoErr(e)
	}
	return int(n), nil
}

// errnoErr returns the common errnos without allocating.
func errnoErr(e syscall.Errno) error {
	switch e {
	case unix.EAGAIN:
		return unix.EAGAIN
	case unix.EINTR:
		return unix.EINTR
	}
	return e
}

// loopWait is how long (ms) an event loop blocks in epoll_wait at most:
// the bound on how late it notices the end of the run or a timeout, and
// on how long it keeps other goroutines off its P.
const loopWait = 5

// epollWaitNB is epoll_wait(2) through RawSyscall; see h1loop.go for why.
func epollWaitNB(epfd int, events []unix.EpollEvent, msec int) (int, error) {
	n, _, e := unix.RawSyscall6(unix.SYS_EPOLL_PWAIT, uintptr(epfd), uintptr(unsafe.Pointer(&events[0])),
		uintptr(len(events)), uintptr(msec), 0, 0)
	if e != 0 {
		return 0, errnoErr(e)
	}
	return int(n), nil
}
