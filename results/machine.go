package results

import (
	"fmt"
	"strings"

	"github.com/wirebench/wirebench/measure"
)

// MachineDiff lists how the machines of two results differ in what sets
// their numbers (fairness rule 8): CPU model, CPU count, the CPUs the
// client could run on (its pinning), kernel and Go version. Empty: the
// two were measured alike and may be compared. A field one of them did
// not record (an older file) is no difference; the host name is none
// either, since two hosts of one kind are the same machine to a benchmark.
func MachineDiff(a, b measure.Env) []string {
	var out []string
	diff := func(name, x, y string) {
		if x != "" && y != "" && x != y {
			out = append(out, fmt.Sprintf("%s %q vs %q", name, x, y))
		}
	}
	count := func(n int) string {
		if n <= 0 {
			return ""
		}
		return fmt.Sprint(n)
	}
	diff("CPU", a.CPUModel, b.CPUModel)
	diff("CPU count", count(a.NumCPU), count(b.NumCPU))
	diff("CPUs allowed", count(len(a.Affinity)), count(len(b.Affinity)))
	diff("kernel", a.Kernel, b.Kernel)
	diff("Go", a.GoVersion, b.GoVersion)
	return out
}

// NotComparable says why two results cannot be compared, in one line
// that starts "not comparable: different machines", or "" when they can:
// a change between them would measure the machines as much as the code.
func NotComparable(a, b measure.Env) string {
	d := MachineDiff(a, b)
	if len(d) == 0 {
		return ""
	}
	return "not comparable: different machines (" + strings.Join(d, "; ") + "): a change between them measures the machines, not the code"
}
