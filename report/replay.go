package report

import (
	"fmt"
	"io"
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
