package browser

import (
	"os"
	"strconv"
	"time"

	"github.com/wirebench/wirebench/measure"
)

// treeCPU sums the user and system CPU time of pid and all its descendants
// from /proc (the browser's processes: renderer, GPU, network service), and
// says how many processes it found. Processes that ended before the call
// are not counted: read it while the tree lives.
func treeCPU(pid int) (user, sys time.Duration, procs int) {
	ents, err := os.ReadDir("/proc")
	if err != nil {
		return 0, 0, 0
	}
	all := map[int]measure.Stat{}
	for _, e := range ents {
		p, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		b, err := os.ReadFile("/proc/" + e.Name() + "/stat")
		if err != nil {
			continue
		}
		if s, err := measure.ParseStat(b); err == nil {
			all[p] = s
		}
	}
	in := map[int]bool{pid: true}
	for changed := true; changed; { // descendants, whatever the order
		changed = false
		for p, s := range all {
			if !in[p] && in[s.PPID] {
				in[p], changed = true, true
			}
		}
	}
	for p := range in {
		if s, ok := all[p]; ok {
			user += s.User
			sys += s.System
			procs++
		}
	}
	return user, sys, procs
}
