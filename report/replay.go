package report

import (
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/wirebench/wirebench/results"
)

// WriteReplay writes what a replay measured: what the recording held, the
// achieved timing error (the load's lag: send − scheduled), what was
// skipped or cut, and how much of the recording was sent.
func WriteReplay(w io.Writer, res *results.Load, run results.ReplayRun) {
	fmt.Fprintf(w, "\n  replay        %d requests scheduled, recorded over %v, %d pass(es)\n", run.Scheduled, run.Span.Round(time.Millisecond), run.Passes)
	if h := res.Lag; h != nil && h.Count() > 0 {
		fmt.Fprintf(w, "  timing error  send − scheduled: p50 %s  p99 %s  max %s\n",
			results.FormatDuration(h.Quantile(.5)), results.FormatDuration(h.Quantile(.99)), results.FormatDuration(h.Max()))
	}
	if run.Malformed > 0 {
		fmt.Fprintf(w, "  skipped       %d lines or entries (malformed or too large)\n", run.Malformed)
		for _, e := range run.MalformedExamples {
			fmt.Fprintf(w, "    %s\n", e)
		}
	}
	if run.GapsCut > 0 {
		fmt.Fprintf(w, "  gaps cut      %d pauses longer than --max-gap (the longest %v)\n", run.GapsCut, run.LongestGap)
	}
	fmt.Fprintf(w, "  sent          %s\n", ReplayCover(res, run))
}

// ReplayCover says how much of the recording a replay sent: "900 of the
// recording's 1000 requests (90.0%)", or how many when the run ended
// before the recording was read to its end.
func ReplayCover(res *results.Load, run results.ReplayRun) string {
	if !run.RecordingRead {
		return fmt.Sprintf("%d requests; the run ended before the recording was read to its end", res.Requests)
	}
	return fmt.Sprintf("%d of the recording's %d requests (%.1f%%)", min(res.Requests, run.PassRequests), run.Recorded, 100*run.ShareSent)
}

// SpeedLine is a replay's capacity answer in speed: "the recording fits 2.7× its own
// rate (812/s) at p99<20ms [2.7×…2.8×)".
func SpeedLine(c *results.Capacity, base float64) string {
	slo := strings.Join(c.SLO, ", ")
	x := func(rate float64) string { return fmt.Sprintf("%.3g×", rate/base) }
	own := fmt.Sprintf("its own rate (%s at speed 1)", results.FormatRate(base))
	switch {
	case c.Rate == 0 && c.Limit == results.LimitMinRate:
		return fmt.Sprintf("no speed met %s: even %s %s failed", slo, x(c.High), own)
	case c.Rate == 0:
		return fmt.Sprintf("unknown: %s", results.CapacityLine(c))
	case c.Limit == results.LimitMaxRate:
		return fmt.Sprintf("the recording fits ≥ %s %s at %s: every speed up to --max-speed met it", x(c.Rate), own, slo)
	case c.Limit == results.LimitClient:
		return fmt.Sprintf("the recording fits ≥ %s %s at %s: the client was the limit at %s, not the server", x(c.Rate), own, slo, x(c.ClientLimit))
	case c.High == 0:
		return fmt.Sprintf("the recording fits ≥ %s %s at %s (the search ran out of time)", x(c.Rate), own, slo)
	}
	return fmt.Sprintf("the recording fits %s %s at %s [%s…%s)", x(c.Rate), own, slo, x(c.Low), x(c.High))
}
