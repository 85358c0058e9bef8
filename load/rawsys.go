package load

import (
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/wirebench/wirebench/internal/rawio"
)

// loopWait is how long (ms) an event loop blocks in epoll_wait at most:
// the bound on how late it notices the end of the run or a timeout, and
// on how long it keeps other goroutines off its P.
const loopWait = 5

// epollWaitNB is epoll_wait(2) through RawSyscall; see h1loop.go for why.
func epollWaitNB(epfd int, events []unix.EpollEvent, msec int) (int, error) {
	n, _, e := unix.RawSyscall6(unix.SYS_EPOLL_PWAIT, uintptr(epfd), uintptr(unsafe.Pointer(&events[0])),
		uintptr(len(events)), uintptr(msec), 0, 0)
	if e != 0 {
		return 0, rawio.Errno(e)
	}
	return int(n), nil
}

// The connection-per-request path (socket, setsockopt, connect,
// epoll_ctl, close on a non-blocking socket) goes through RawSyscall for
// the reason rawio.Read does (internal/rawio): none of these calls blocks, and telling the
// runtime about each costs more than the call on loopback.

// rawSockaddr is a socket address in the kernel's layout, built once.
type rawSockaddr struct {
	family int
	in4    unix.RawSockaddrInet4
	in6    unix.RawSockaddrInet6
}

func newRawSockaddr(sa unix.Sockaddr) *rawSockaddr {
	r := &rawSockaddr{}
	switch sa := sa.(type) {
	case *unix.SockaddrInet4:
		r.family = unix.AF_INET
		r.in4.Family = unix.AF_INET
		r.in4.Port = htons(sa.Port)
		r.in4.Addr = sa.Addr
	case *unix.SockaddrInet6:
		r.family = unix.AF_INET6
		r.in6.Family = unix.AF_INET6
		r.in6.Port = htons(sa.Port)
		r.in6.Addr = sa.Addr
	}
	return r
}

func htons(p int) uint16 { return uint16(p>>8&0xff) | uint16(p&0xff)<<8 }

func (r *rawSockaddr) ptr() (unsafe.Pointer, uintptr) {
	if r.family == unix.AF_INET {
		return unsafe.Pointer(&r.in4), unsafe.Sizeof(r.in4)
	}
	return unsafe.Pointer(&r.in6), unsafe.Sizeof(r.in6)
}

// socketNB opens a non-blocking TCP socket with TCP_NODELAY set.
func socketNB(family int) (int, error) {
	fd, _, e := unix.RawSyscall(unix.SYS_SOCKET, uintptr(family), unix.SOCK_STREAM|unix.SOCK_NONBLOCK|unix.SOCK_CLOEXEC, 0)
	if e != 0 {
		return -1, e
	}
	one := int32(1)
	// As Go's dialer and wrk: requests are written whole, no Nagle delay.
	unix.RawSyscall6(unix.SYS_SETSOCKOPT, fd, unix.IPPROTO_TCP, unix.TCP_NODELAY, uintptr(unsafe.Pointer(&one)), 4, 0)
	return int(fd), nil
}

func connectNB(fd int, sa *rawSockaddr) error {
	p, n := sa.ptr()
	_, _, e := unix.RawSyscall(unix.SYS_CONNECT, uintptr(fd), uintptr(p), n)
	if e != 0 {
		return rawio.Errno(e)
	}
	return nil
}

func closeNB(fd int) {
	unix.RawSyscall(unix.SYS_CLOSE, uintptr(fd), 0, 0)
}

func epollCtlNB(epfd, op, fd int, ev *unix.EpollEvent) error {
	_, _, e := unix.RawSyscall6(unix.SYS_EPOLL_CTL, uintptr(epfd), uintptr(op), uintptr(fd), uintptr(unsafe.Pointer(ev)), 0, 0)
	if e != 0 {
		return e
	}
	return nil
}
