package measure

import (
	"time"

	"golang.org/x/sys/unix"
)

// SelfCPU returns the calling process's user and system CPU time from
// getrusage, at microsecond resolution: /proc's 10 ms ticks are too coarse
// to give a short run's CPU per request.
func SelfCPU() (user, sys time.Duration) {
	var ru unix.Rusage
	if err := unix.Getrusage(unix.RUSAGE_SELF, &ru); err != nil {
		return 0, 0
	}
	return time.Duration(ru.Utime.Nano()), time.Duration(ru.Stime.Nano())
}
