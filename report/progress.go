package report

import (
	"fmt"
	"io"
	"strings"

	"github.com/wirebench/wirebench/results"
)

// CapacityProgress returns a capacity search's progress hook
// (capacity.Options.Progress) that writes one line per step to w: offered
// and achieved rate, p50, p99, the client's CPU and the verdict. With
// speedBase > 0 (a replay's search, in speed factors of the recording's
// rate) each line gives the speed too.
func CapacityProgress(w io.Writer, speedBase float64) func(int, results.CapacityStep) {
	return func(n int, s results.CapacityStep) {
		name := fmt.Sprintf("step %2d", n)
		if n == 0 {
			name = "confirm"
		}
		if speedBase > 0 {
			fmt.Fprintf(w, "  %s  speed %-7.3g %10s  p50 %-8s p99 %-8s client CPU %3.0f%%  %s\n", name, s.Offered/speedBase,
				results.FormatRate(s.Offered), results.FormatDuration(s.P50), results.FormatDuration(s.P99), 100*s.ClientCPU, s.Verdict)
			return
		}
		failed := ""
		if s.Failed > 0 {
			failed = "  failures: " + results.CausesLine(s.Failures, s.Requests)
		}
		v := s.Verdict
		if len(s.Disturbed) > 0 {
			v += " (disturbed: " + strings.Join(s.Disturbed, "; ") + ")"
			if s.Retried {
				v += ", measured again"
			}
		}
		fmt.Fprintf(w, "  %s  %10s  → %10s  p50 %-8s p99 %-8s client CPU %3.0f%%  %s%s\n", name, results.FormatRate(s.Offered),
			results.FormatRate(s.Achieved), results.FormatDuration(s.P50), results.FormatDuration(s.P99), 100*s.ClientCPU, v, failed)
	}
}

// WriteThresholds writes each threshold's verdict, one line each (✓ or ✗,
// the expression, the figure it was checked against); nothing for none.
func WriteThresholds(w io.Writer, ths []results.ThresholdResult) {
	if len(ths) == 0 {
		return
	}
	fmt.Fprintln(w, "\n  thresholds")
	for _, th := range ths {
		mark := "✓"
		if !th.Pass {
			mark = "✗"
		}
		fmt.Fprintf(w, "    %s %-20s measured %s\n", mark, th.Expr, th.Measured)
	}
}
