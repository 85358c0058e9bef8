package browser

import (
	"os"
	"strconv"
	"strings"
	"time"
)

// clkTck is the kernel's USER_HZ, the unit of /proc/<pid>/stat times
// (100 on every Linux this runs on).
const clkTck = 100

// treeCPU sums the user and system CPU time of pid and all its descendants
// from /proc (the browser's processes: renderer, GPU, network service), and
// says how many processes it found. Processes that ended before the call
// are not counted: read it while the tree lives.
func treeCPU(pid int) (user, sys time.Duration, procs int) {
	ents, err := os.ReadDir("/proc")
	if err != nil {
		return 0, 0, 0
	}
	type st struct {
		ppid       int
		utime, stm int64
	}
	all := map[int]st{}
	for _, e := range ents {
		p, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		b, err := os.ReadFile("/proc/" + e.Name() + "/stat")
		if err != nil {
			continue
		}
		if s, ok := parseStat(string(b)); ok {
			all[p] = st{int(s[0]), s[1], s[2]}
		}
	}
	in := map[int]bool{pid: true}
	for changed := true; changed; { // descendants, whatever the order
		changed = false
		for p, s := range all {
			if !in[p] && in[s.ppid] {
				in[p], changed = true, true
			}
		}
	}
	for p := range in {
		if s, ok := all[p]; ok {
			user += time.Duration(s.utime) * time.Second / clkTck
			sys += time.Duration(s.stm) * time.Second / clkTck
			procs++
		}
	}
	return user, sys, procs
}

// parseStat returns ppid, utime and stime from a /proc/<pid>/stat line
// (fields 4, 14, 15; the command, field 2, may hold spaces and parens).
func parseStat(line string) ([3]int64, bool) {
	i := strings.LastIndexByte(line, ')')
	if i < 0 {
		return [3]int64{}, false
	}
	f := strings.Fields(line[i+1:]) // f[0] is field 3 (state)
	if len(f) < 13 {
		return [3]int64{}, false
	}
	var out [3]int64
	for j, k := range []int{1, 11, 12} {
		n, err := strconv.ParseInt(f[k], 10, 64)
		if err != nil {
			return [3]int64{}, false
		}
		out[j] = n
	}
	return out, true
}
