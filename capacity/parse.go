package capacity

import (
	"fmt"
	"strconv"
	"strings"
)

// ParsePrecision reads a search's precision as a fraction: "5%" or
// "0.05", 0 < p ≤ 1.
func ParsePrecision(s string) (float64, error) {
	t := strings.TrimSpace(s)
	pct := strings.HasSuffix(t, "%")
	v, err := strconv.ParseFloat(strings.TrimSuffix(t, "%"), 64)
	if pct {
		v /= 100
	}
	if err != nil || !(v > 0 && v <= 1) {
		return 0, fmt.Errorf("%w: precision %q: want a fraction such as 5%% or 0.05", ErrOptions, s)
	}
	return v, nil
}

// ParseQuota reads a server CPU quota as ServerQuota takes it: auto (0,
// calibrated), off (-1, none) or a number of CPUs (0.5).
func ParseQuota(s string) (float64, error) {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "auto", "":
		return 0, nil
	case "off", "none", "0":
		return -1, nil
	}
	v, err := strconv.ParseFloat(s, 64)
	if err != nil || !(v > 0 && v <= 1024) {
		return 0, fmt.Errorf("%q: want CPUs such as 0.5, auto or off", s)
	}
	return v, nil
}
