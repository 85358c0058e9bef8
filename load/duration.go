package load

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"
)

// ParseDuration reads a duration as wrk, hey and k6 users type it: a Go
// duration ("1m30s", "500ms") or a bare number of seconds ("5", "0.5").
// Negative, NaN and out-of-range values are refused.
func ParseDuration(s string) (time.Duration, error) {
	s = strings.TrimSpace(s)
	if f, err := strconv.ParseFloat(s, 64); err == nil {
		if f < 0 || math.IsNaN(f) || f*float64(time.Second) > math.MaxInt64 {
			return 0, fmt.Errorf("%w: duration %q: want a non-negative number of seconds or a duration such as 5s", ErrOptions, s)
		}
		return time.Duration(f * float64(time.Second)), nil
	}
	d, err := time.ParseDuration(s)
	if err != nil || d < 0 {
		return 0, fmt.Errorf("%w: duration %q: want e.g. 5s, 1m30s, 500ms or 5 (seconds)", ErrOptions, s)
	}
	return d, nil
}
