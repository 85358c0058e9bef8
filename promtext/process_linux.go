package promtext

import (
	"os"
	"syscall"
)

// userHZ is the unit of /proc's times. The kernel reports them in
// USER_HZ, 100 on every Linux architecture Go supports (as procfs, which
// client_golang uses, also assumes).
const userHZ = 100

// AppendProcess appends client_golang's process_* figures for this
// process, from /proc. What cannot be read is left out, and the error
// of the first such read returned with what could be written.
func AppendProcess(b []byte) ([]byte, error) {
	raw, err := os.ReadFile("/proc/self/stat")
	if err != nil {
		return b, err
	}
	st, err := parseProcStat(raw)
	if err != nil {
		return b, err
	}
	b = AppendHeader(b, "process_cpu_seconds_total", "Total user and system CPU time spent in seconds.", Counter)
	b = AppendFloat(b, "process_cpu_seconds_total", float64(st.utime+st.stime)/userHZ)
	b = AppendGauge(b, "process_resident_memory_bytes", "Resident memory size in bytes.", float64(st.rss*uint64(os.Getpagesize())))
	b = AppendGauge(b, "process_virtual_memory_bytes", "Virtual memory size in bytes.", float64(st.vsize))
	var firstErr error
	if sys, err := os.ReadFile("/proc/stat"); err != nil {
		firstErr = err
	} else if boot, err := parseBootTime(sys); err != nil {
		firstErr = err
	} else {
		b = AppendGauge(b, "process_start_time_seconds", "Start time of the process since unix epoch in seconds.", float64(boot)+float64(st.starttime)/userHZ)
	}
	if fds, err := os.ReadDir("/proc/self/fd"); err != nil {
		firstErr = cmpOr(firstErr, err)
	} else {
		// The count includes the descriptor reading the directory, as
		// procfs' does.
		b = AppendGauge(b, "process_open_fds", "Number of open file descriptors.", float64(len(fds)))
	}
	var lim syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &lim); err != nil {
		firstErr = cmpOr(firstErr, err)
	} else {
		b = AppendGauge(b, "process_max_fds", "Maximum number of open file descriptors.", float64(lim.Cur))
	}
	return b, firstErr
}

func cmpOr(a, b error) error {
	if a != nil {
		return a
	}
	return b
}
