package results

import (
	"fmt"
	"strings"
)

// CPUList prints a CPU set as taskset does: 0-3,6 for [0 1 2 3 6], and
// "any" for none (not pinned).
func CPUList(cpus []int) string {
	if len(cpus) == 0 {
		return "any"
	}
	var parts []string
	for i := 0; i < len(cpus); {
		j := i
		for j+1 < len(cpus) && cpus[j+1] == cpus[j]+1 {
			j++
		}
		if j > i {
			parts = append(parts, fmt.Sprintf("%d-%d", cpus[i], cpus[j]))
		} else {
			parts = append(parts, fmt.Sprint(cpus[i]))
		}
		i = j + 1
	}
	return strings.Join(parts, ",")
}
