package results

import (
	"fmt"
	"io"
	"strconv"
	"strings"
)

// WrkPercentiles are the rows of wrk's --latency table.
var WrkPercentiles = []float64{50, 75, 90, 99}

// ParsePercentiles reads "50,90,99,99.9" (percent, each in (0, 100]).
func ParsePercentiles(s string) ([]float64, error) {
	var out []float64
	for _, p := range strings.Split(s, ",") {
		p = strings.TrimSuffix(strings.TrimSpace(p), "%")
		p = strings.TrimPrefix(p, "p")
		v, err := strconv.ParseFloat(p, 64)
		if err != nil || !(v > 0 && v <= 100) {
			return nil, fmt.Errorf("%w: percentile %q: want a number in (0, 100], e.g. 50,90,99,99.9", ErrOptions, p)
		}
		out = append(out, v)
	}
	return out, nil
}

// WriteDistribution prints the latency at each percentile, as wrk's
// --latency does ("Latency Distribution", one row per percentile).
func WriteDistribution(w io.Writer, r *Load, percentiles []float64) error {
	ew := &errWriter{w: w}
	ew.printf("\n  latency distribution\n")
	for _, p := range percentiles {
		ew.printf("    %7s%%  %v\n", strconv.FormatFloat(p, 'f', -1, 64), FormatDuration(r.Latency.Quantile(p/100)))
	}
	return ew.err
}
