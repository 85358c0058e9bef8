package promtext

import (
	"bytes"
	"errors"
	"fmt"
	"strconv"
)

// ErrProcStat is wrapped by parse errors of /proc files.
var ErrProcStat = errors.New("promtext: malformed /proc data")

// procStat holds the fields of /proc/PID/stat that the process metrics
// use (proc(5)); times are in clock ticks, rss in pages.
type procStat struct {
	utime, stime, starttime, vsize, rss uint64
}

// parseProcStat reads /proc/PID/stat. The command name, field 2, is in
// parentheses and may hold spaces and parentheses itself, so the fields
// are counted from the last ')'.
func parseProcStat(b []byte) (procStat, error) {
	var s procStat
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return s, fmt.Errorf("%w: stat has no ')' after the command name", ErrProcStat)
	}
	f := bytes.Fields(b[i+1:]) // f[0] is field 3, the state
	const last = 24
	if len(f) < last-2 {
		return s, fmt.Errorf("%w: stat has %d fields after the command name, want at least %d", ErrProcStat, len(f), last-2)
	}
	for _, x := range []struct {
		field int
		dst   *uint64
	}{{14, &s.utime}, {15, &s.stime}, {22, &s.starttime}, {23, &s.vsize}, {24, &s.rss}} {
		v, err := strconv.ParseUint(string(f[x.field-3]), 10, 64)
		if err != nil {
			// rss is signed in the kernel's format; a negative one is a
			// malformed file here like any other bad number.
			return s, fmt.Errorf("%w: stat field %d: %v", ErrProcStat, x.field, err)
		}
		*x.dst = v
	}
	return s, nil
}

// parseBootTime reads the btime line of /proc/stat: the boot time in
// seconds since 1970.
func parseBootTime(b []byte) (uint64, error) {
	for line := range bytes.Lines(b) {
		if v, ok := bytes.CutPrefix(line, []byte("btime ")); ok {
			t, err := strconv.ParseUint(string(bytes.TrimSpace(v)), 10, 64)
			if err != nil {
				return 0, fmt.Errorf("%w: btime: %v", ErrProcStat, err)
			}
			return t, nil
		}
	}
	return 0, fmt.Errorf("%w: /proc/stat has no btime line", ErrProcStat)
}
