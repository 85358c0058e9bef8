package measure

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"
)

// CPUTimes are one CPU's cumulative times from /proc/stat.
type CPUTimes struct {
	Busy, Steal, Total time.Duration
}

// CPUStat is one reading of /proc/stat's per-CPU lines, by CPU number.
type CPUStat map[int]CPUTimes

// ReadCPUStat reads /proc/stat. Busy is everything but idle, iowait and
// steal; Steal is time the hypervisor gave another guest; Total is all
// of it (guest times are already inside user and nice).
func ReadCPUStat() (CPUStat, error) {
	b, err := os.ReadFile("/proc/stat")
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrProc, err)
	}
	return parseCPUStat(b)
}

func parseCPUStat(b []byte) (CPUStat, error) {
	out := CPUStat{}
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) < 9 || !strings.HasPrefix(f[0], "cpu") || f[0] == "cpu" {
			continue
		}
		n, err := strconv.Atoi(f[0][3:])
		if err != nil {
			continue
		}
		// user nice system idle iowait irq softirq steal [guest guest_nice]
		var v [8]int64
		for i := range v {
			if v[i], err = strconv.ParseInt(f[i+1], 10, 64); err != nil {
				return nil, fmt.Errorf("%w: /proc/stat %s: %v", ErrProc, f[0], err)
			}
		}
		t := func(x int64) time.Duration { return time.Duration(x) * clockTick }
		busy := v[0] + v[1] + v[2] + v[5] + v[6]
		out[n] = CPUTimes{Busy: t(busy), Steal: t(v[7]), Total: t(busy + v[3] + v[4] + v[7])}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("%w: /proc/stat has no per-CPU line", ErrProc)
	}
	return out, nil
}

// Since sums the times of cpus (every CPU if empty) from s0 to s.
func (s CPUStat) Since(s0 CPUStat, cpus []int) CPUTimes {
	var d CPUTimes
	add := func(c int) {
		a, b := s[c], s0[c]
		d.Busy += a.Busy - b.Busy
		d.Steal += a.Steal - b.Steal
		d.Total += a.Total - b.Total
	}
	if len(cpus) == 0 {
		for c := range s {
			add(c)
		}
		return d
	}
	for _, c := range cpus {
		add(c)
	}
	return d
}
