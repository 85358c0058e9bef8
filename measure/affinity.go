package measure

import (
	"fmt"
	"os"
	"runtime"
	"strconv"

	"golang.org/x/sys/unix"
)

// Pin restricts the whole process to cpus (fairness rule 4: client and
// server on separate CPUs). sched_setaffinity applies to one thread, so
// Pin sets it on every thread in /proc/self/task; threads started later
// inherit it from their creator. GOMAXPROCS is lowered to match so the
// scheduler does not run more Ps than CPUs.
func Pin(cpus []int) error {
	if len(cpus) == 0 {
		return fmt.Errorf("measure: pin: empty CPU list")
	}
	var set unix.CPUSet
	for _, c := range cpus {
		set.Set(c)
	}
	tasks, err := os.ReadDir("/proc/self/task")
	if err != nil {
		return fmt.Errorf("measure: pin: %w", err)
	}
	for _, t := range tasks {
		tid, err := strconv.Atoi(t.Name())
		if err != nil {
			continue
		}
		if err := unix.SchedSetaffinity(tid, &set); err != nil {
			return fmt.Errorf("measure: pin thread %d to %v: %w", tid, cpus, err)
		}
	}
	runtime.GOMAXPROCS(len(cpus))
	return nil
}
