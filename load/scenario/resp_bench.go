package scenario

import (
	"strconv"
	"strings"
)

// ParseRedisBenchmarkCSV reads redis-benchmark --csv output into requests
// per second by test name ("SET", "GET"), for cross-checks beside our own
// client. Lines it does not understand are skipped.
func ParseRedisBenchmarkCSV(out string) map[string]float64 { return parseRedisBenchmarkCSV(out) }

func parseRedisBenchmarkCSV(out string) map[string]float64 {
	rps := map[string]float64{}
	for _, line := range strings.Split(out, "\n") {
		f := strings.Split(strings.TrimSpace(line), ",")
		if len(f) < 2 {
			continue
		}
		name := strings.Trim(f[0], `"`)
		v, err := strconv.ParseFloat(strings.Trim(f[1], `"`), 64)
		if err != nil {
			continue // the header line
		}
		rps[name] = v
	}
	return rps
}
