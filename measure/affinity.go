package measure

import (
	"fmt"
	"os"
	"runtime"
	"strconv"
	"time"

	"golang.org/x/sys/unix"
)

// Pin restricts the whole process to cpus (fairness rule 4: client and
// server on separate CPUs). sched_setaffinity applies to one thread, so
// Pin sets it on every thread in /proc/self/task; threads started later
// inherit it from their creator. A thread being cloned while its creator is
// pinned can still come out with the old set and show up in /proc only
// afterwards (seen in 2 of 5 runs of TestPinToOneCPU), so Pin checks every
// thread's set again, a millisecond apart, until two passes in a row find
// nothing to fix. GOMAXPROCS is lowered to match so the scheduler does not
// run more Ps than CPUs.
func Pin(cpus []int) error {
	if len(cpus) == 0 {
		return fmt.Errorf("measure: pin: empty CPU list")
	}
	var set unix.CPUSet
	for _, c := range cpus {
		set.Set(c)
	}
	for clean := 0; clean < 2; {
		fixed, err := pinPass(&set)
		if err != nil {
			return fmt.Errorf("measure: pin to %v: %w", cpus, err)
		}
		clean++
		if fixed {
			clean = 0
		}
		time.Sleep(time.Millisecond)
	}
	runtime.GOMAXPROCS(len(cpus))
	return nil
}

// pinPass sets set on every thread of the process that has another set,
// and reports whether there was one. A thread that exited meanwhile (ESRCH)
// is skipped.
func pinPass(set *unix.CPUSet) (fixed bool, err error) {
	tasks, err := os.ReadDir("/proc/self/task")
	if err != nil {
		return false, err
	}
	for _, t := range tasks {
		tid, err := strconv.Atoi(t.Name())
		if err != nil {
			continue
		}
		var cur unix.CPUSet
		if err := unix.SchedGetaffinity(tid, &cur); err == nil && cur == *set {
			continue
		}
		if err := unix.SchedSetaffinity(tid, set); err != nil && err != unix.ESRCH {
			return fixed, fmt.Errorf("thread %d: %w", tid, err)
		}
		fixed = true
	}
	return fixed, nil
}
