package tick

import (
	"os"
	"time"

	"golang.org/x/sys/unix"
)

// newTimerfd is a Ticker on a non-blocking timerfd, which os.NewFile
// registers with the netpoller; nil if the kernel refuses one.
func newTimerfd(d time.Duration) *Ticker {
	fd, err := unix.TimerfdCreate(unix.CLOCK_MONOTONIC, unix.TFD_NONBLOCK|unix.TFD_CLOEXEC)
	if err != nil {
		return nil
	}
	ts := unix.NsecToTimespec(int64(d))
	if unix.TimerfdSettime(fd, 0, &unix.ItimerSpec{Interval: ts, Value: ts}, nil) != nil {
		unix.Close(fd)
		return nil
	}
	f := os.NewFile(uintptr(fd), "tick")
	c := make(chan time.Time, 1)
	go func() {
		// Each read returns the expirations since the last one (8
		// bytes); Close makes the blocked read fail.
		var b [8]byte
		for {
			if _, err := f.Read(b[:]); err != nil {
				return
			}
			select {
			case c <- time.Now():
			default:
			}
		}
	}()
	return &Ticker{C: c, stop: func() { f.Close() }, timerfd: true}
}
