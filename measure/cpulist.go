package measure

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// ErrCPUList marks a CPU list that cannot be read.
var ErrCPUList = errors.New("measure: bad CPU list")

// ParseCPUList reads a CPU list as taskset -c and /sys write it: "0",
// "0-3", "0,2-3". It is the one reader of every --cpus-like flag and study
// option, so that they all accept the same lists.
func ParseCPUList(s string) ([]int, error) {
	var out []int
	for _, part := range strings.Split(s, ",") {
		a, b, isRange := strings.Cut(strings.TrimSpace(part), "-")
		lo, err1 := strconv.Atoi(a)
		hi, err2 := lo, error(nil)
		if isRange {
			hi, err2 = strconv.Atoi(b)
		}
		if err1 != nil || err2 != nil || lo < 0 || hi < lo {
			return nil, fmt.Errorf("%w: %q: want a list such as 0 or 0-1,3", ErrCPUList, s)
		}
		for c := lo; c <= hi; c++ {
			out = append(out, c)
		}
	}
	return out, nil
}

// PinList pins the process to the CPUs of list s (ParseCPUList, then
// Pin); an empty s pins nothing.
func PinList(s string) error {
	if s == "" {
		return nil
	}
	cpus, err := ParseCPUList(s)
	if err != nil {
		return err
	}
	return Pin(cpus)
}
