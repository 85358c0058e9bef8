package measure

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"strconv"
	"time"
)

// clockTick is USER_HZ, the unit of utime and stime in /proc/<pid>/stat.
// It is 100 on every Linux ABI Go supports; sysconf(_SC_CLK_TCK) would
// need cgo to ask.
const clockTick = 10 * time.Millisecond

// ProcSample is one reading of a process's resource use. CPU times are
// cumulative since the process started; subtract two samples for a run.
type ProcSample struct {
	PID    int           `json:"pid"`
	At     time.Time     `json:"at"`
	User   time.Duration `json:"user_ns"`
	System time.Duration `json:"system_ns"`
	// RSS and PeakRSS are VmRSS and VmHWM from /proc/<pid>/status, in bytes.
	RSS     int64 `json:"rss_bytes"`
	PeakRSS int64 `json:"peak_rss_bytes"`
}

// CPU is user plus system time.
func (s ProcSample) CPU() time.Duration { return s.User + s.System }

// SampleProc reads /proc/<pid>/stat and /proc/<pid>/status. The studies
// sample the server by its own PID (rule 7), never by whatever a port
// lookup printed first. Resolution of the CPU times is 10 ms.
func SampleProc(pid int) (ProcSample, error) {
	s := ProcSample{PID: pid, At: time.Now()}
	dir := "/proc/" + strconv.Itoa(pid)
	stat, err := os.ReadFile(dir + "/stat")
	if err != nil {
		return s, fmt.Errorf("%w: %v", ErrProc, err)
	}
	if s.User, s.System, err = parseStat(stat); err != nil {
		return s, fmt.Errorf("%w: pid %d: %v", ErrProc, pid, err)
	}
	status, err := os.ReadFile(dir + "/status")
	if err != nil {
		return s, fmt.Errorf("%w: %v", ErrProc, err)
	}
	s.RSS, s.PeakRSS = parseStatus(status)
	return s, nil
}

// SampleSelf samples the calling process.
func SampleSelf() (ProcSample, error) { return SampleProc(os.Getpid()) }

// Stat is what wirebench reads of /proc/<pid>/stat: the parent and the
// CPU time (proc(5) fields 4, 14 and 15).
type Stat struct {
	PPID         int
	User, System time.Duration
}

// ParseStat reads a /proc/<pid>/stat line. The command name (field 2) is
// in parentheses and may hold spaces and parentheses, so fields are
// counted after the last ')'. One parser for the sampler and the browser's
// process tree.
func ParseStat(b []byte) (Stat, error) {
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return Stat{}, fmt.Errorf("no ')' in stat")
	}
	f := bytes.Fields(b[i+1:])
	// f[0] is field 3 (state): ppid is field 4 → f[1], utime 14 → f[11], stime f[12].
	if len(f) < 13 {
		return Stat{}, fmt.Errorf("stat has %d fields after comm", len(f))
	}
	p, err0 := strconv.Atoi(string(f[1]))
	u, err1 := strconv.ParseInt(string(f[11]), 10, 64)
	s, err2 := strconv.ParseInt(string(f[12]), 10, 64)
	if err0 != nil || err1 != nil || err2 != nil {
		return Stat{}, fmt.Errorf("bad ppid/utime/stime %q %q %q", f[1], f[11], f[12])
	}
	return Stat{PPID: p, User: time.Duration(u) * clockTick, System: time.Duration(s) * clockTick}, nil
}

// parseStat extracts utime and stime.
func parseStat(b []byte) (user, sys time.Duration, err error) {
	st, err := ParseStat(b)
	return st.User, st.System, err
}

// parseStatus extracts VmRSS and VmHWM (kB) as bytes; missing lines (a
// kernel thread, a zombie) read as zero.
func parseStatus(b []byte) (rss, peak int64) {
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		line := sc.Bytes()
		switch {
		case bytes.HasPrefix(line, []byte("VmRSS:")):
			rss = kb(line[len("VmRSS:"):])
		case bytes.HasPrefix(line, []byte("VmHWM:")):
			peak = kb(line[len("VmHWM:"):])
		}
	}
	return rss, peak
}

func kb(v []byte) int64 {
	f := bytes.Fields(v)
	if len(f) == 0 {
		return 0
	}
	n, _ := strconv.ParseInt(string(f[0]), 10, 64)
	return n * 1024
}
