package load

import (
	"context"
	"errors"
	"os"
	"time"

	"github.com/wirebench/wirebench/load/clientio"
	"golang.org/x/sys/unix"
)

// sleeper waits until an intended send time with microsecond precision.
//
// Why not time.Timer: Go's netpoller sleeps in whole milliseconds, so on
// an otherwise idle process a timer fires up to ~1 ms late (measured: p50
// 0.89 ms late for a 3.3 ms timer). In open loop that lateness is client
// schedule lag and lands in the corrected latency: at 3000 req/s against
// a 150 µs server it tripled p50. A timerfd is a file the kernel makes
// readable at the programmed time, so the netpoller wakes on an event,
// not on a rounded timeout. Cost: a timerfd_settime and a read per wait.
//
// Not safe for concurrent use: one per worker.
type sleeper struct {
	f     *os.File
	fd    int
	timer *time.Timer // fallback where timerfd is unavailable
	buf   [8]byte
	stop  func() bool
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
	s.stop = context.AfterFunc(ctx, func() { s.f.SetReadDeadline(clientio.Wake) })
	return s
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
