package load

import (
	"context"
	"errors"
	"os"
	"syscall"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/wirebench/wirebench/internal/rawio"
	"github.com/wirebench/wirebench/load/clientio"
)

// sleeper waits until an intended send time with microsecond precision.
//
// Why not time.Timer: Go's netpoller sleeps in whole milliseconds, so on
// an otherwise idle process a timer fires up to ~1 ms late (measured: p50
// 0.89 ms late for a 3.3 ms timer). In open loop that lateness is client
// schedule lag and lands in the corrected latency: at 3000 req/s against
// a 150 µs server it tripled p50. A timerfd is a file the kernel makes
// readable at the programmed time, so the netpoller wakes on an event,
// not on a rounded timeout. Cost: a timerfd_settime and a read per wait:
// the timer is armed inside RawConn.Read's callback, after the poller's
// readiness is reset on entry, so the read that would find the timer not
// yet expired (EAGAIN, one system call per wait: a third of the engine's
// own per request in open loop) is not made, and an expiry however soon
// still wakes the wait. Both calls are raw (timerfdSettime, rawio.Read):
// neither blocks, and a system call the runtime is told of wakes its
// sysmon thread from its idle sleep into polls of 20 µs and more on the
// same CPU (internal/rawio's reason). In open loop that was two wake-ups
// of sysmon per request and ~40% of the client's CPU (gRPC at 2,000/s:
// 135 → 79 µs per call). Those polls had one use, on a CPU that other
// busy processes share: they gave the process turns on it, and the
// worker a timer woke ran sooner (schedule lag p50 ~50 µs with them,
// 0.2-1.2 ms without, at load average ~12 on 2 CPUs; with the CPU to
// itself, chrt -f, ~50 µs both ways). A client starved of its CPU shows
// as such in its lag (Load.ClientLag) rather than paying for polls.
//
// Not safe for concurrent use: one per worker.
type sleeper struct {
	f     *os.File
	rc    syscall.RawConn
	fd    int
	timer *time.Timer // fallback where timerfd is unavailable
	buf   [8]byte
	stop  func() bool
	// the wait in progress, for wait (bound once: no allocation per wait)
	spec   unix.ItimerSpec
	armed  bool
	err    error
	waitFn func(fd uintptr) bool
}

// newSleeper returns a sleeper whose waits end when ctx does.
func newSleeper(ctx context.Context) *sleeper {
	s := &sleeper{fd: -1}
	fd, err := unix.TimerfdCreate(unix.CLOCK_MONOTONIC, unix.TFD_NONBLOCK|unix.TFD_CLOEXEC)
	if err != nil {
		s.timer = time.NewTimer(time.Hour)
		s.timer.Stop()
		return s
	}
	s.fd, s.f = fd, os.NewFile(uintptr(fd), "timerfd") // non-blocking: joins the netpoller
	if s.rc, err = s.f.SyscallConn(); err != nil {
		s.rc = nil
	}
	s.waitFn = s.wait
	s.stop = context.AfterFunc(ctx, func() { s.f.SetReadDeadline(clientio.Wake) })
	return s
}

// wait is RawConn.Read's callback: first it arms the timer (the poller's
// readiness was reset before it is called, so the expiry wakes the wait
// that follows), then it reads the expiry once the poller says it came.
func (s *sleeper) wait(fd uintptr) bool {
	if !s.armed {
		s.armed = true
		s.err = timerfdSettime(int(fd), &s.spec)
		return s.err != nil // wait for the expiry, unless arming failed
	}
	for {
		_, err := rawio.Read(int(fd), s.buf[:])
		switch err {
		case unix.EINTR:
			continue
		case unix.EAGAIN:
			return false // woken early: wait again
		}
		s.err = err
		return true
	}
}

// timerfdSettime is timerfd_settime(2) (relative, no old value) through
// RawSyscall: see sleeper.
func timerfdSettime(fd int, spec *unix.ItimerSpec) error {
	_, _, e := unix.RawSyscall6(unix.SYS_TIMERFD_SETTIME, uintptr(fd), 0, uintptr(unsafe.Pointer(spec)), 0, 0, 0)
	if e != 0 {
		return rawio.Errno(e)
	}
	return nil
}

// until waits for t; false if ctx ended first.
func (s *sleeper) until(ctx context.Context, t time.Time) bool {
	d := time.Until(t)
	if d <= 0 {
		return ctx.Err() == nil
	}
	if s.f == nil {
		return sleepUntil(ctx, s.timer, t)
	}
	if s.rc != nil {
		s.spec, s.armed, s.err = unix.ItimerSpec{Value: unix.NsecToTimespec(int64(d))}, false, nil
		err := s.rc.Read(s.waitFn)
		switch {
		case err == nil && s.err == nil:
			return true
		case errors.Is(err, os.ErrDeadlineExceeded) || ctx.Err() != nil:
			return false // ctx ended
		}
		return sleepUntil(ctx, time.NewTimer(time.Until(t)), t)
	}
	spec := unix.ItimerSpec{Value: unix.NsecToTimespec(int64(d))}
	if err := unix.TimerfdSettime(s.fd, 0, &spec, nil); err != nil {
		return sleepUntil(ctx, time.NewTimer(d), t)
	}
	for {
		_, err := s.f.Read(s.buf[:])
		switch {
		case err == nil:
			return true
		case errors.Is(err, os.ErrDeadlineExceeded):
			return false // ctx ended
		case ctx.Err() != nil:
			return false
		default:
			return sleepUntil(ctx, time.NewTimer(time.Until(t)), t)
		}
	}
}

func (s *sleeper) close() {
	if s.stop != nil {
		s.stop()
	}
	if s.f != nil {
		s.f.Close()
	}
}
