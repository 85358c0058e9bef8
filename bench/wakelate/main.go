// Command wakelate measures how late a thread sleeping 2 ms wakes: the
// scheduler's cost to a process that shares its CPU with another
// (bench/wake-late.sh runs it beside a CPU-bound process at nice 19 and
// under SCHED_IDLE, and itself under SCHED_FIFO). It prints the
// lateness's p50, p99 and maximum over -n sleeps.
package main

import (
	"flag"
	"fmt"
	"slices"
	"time"
)

func main() {
	n := flag.Int("n", 1000, "sleeps")
	d := flag.Duration("d", 2*time.Millisecond, "each sleep")
	flag.Parse()
	late := make([]time.Duration, 0, *n)
	for range *n {
		t := time.Now()
		time.Sleep(*d)
		late = append(late, time.Since(t)-*d)
	}
	slices.Sort(late)
	r := func(q float64) time.Duration { return late[int(q*float64(len(late)-1))].Round(time.Microsecond) }
	fmt.Printf("woke late: p50 %v p99 %v max %v\n", r(0.5), r(0.99), r(1))
}
