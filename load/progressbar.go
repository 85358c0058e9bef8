package load

import (
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/wirebench/wirebench/results"
)

// progressBarWidth is the bar's length in cells: with the figures beside
// it the line fits an 80-column terminal.
const progressBarWidth = 24

// ProgressBar returns an Options.Progress callback that redraws one line
// on w, as bombardier does: a bar of the run so far, elapsed and total,
// the time left, the rate and the errors, and the latency so far. The bar
// measures requests against -n, else time against the duration (-d or the
// stages); w should be a terminal, since the line is redrawn with \r.
func ProgressBar(w io.Writer, o Options) func(Progress) {
	eff, err := o.withDefaults()
	if err != nil {
		eff = o
	}
	return func(p Progress) { fmt.Fprint(w, "\r"+FormatProgress(p, eff)+"\033[K") }
}

// FormatProgress renders one progress line for a run with options o
// (defaults filled): "[=====>      ]  42%  4.2s/10s  ETA 5.8s  12.3k req/s
// 0 errors  p50 1.2ms  p99 3.4ms".
func FormatProgress(p Progress, o Options) string {
	frac, left, known := progressFraction(p, o)
	var b strings.Builder
	if known {
		fill := int(frac * progressBarWidth)
		bar := strings.Repeat("=", fill)
		if fill < progressBarWidth {
			bar += ">" + strings.Repeat(" ", progressBarWidth-fill-1)
		}
		fmt.Fprintf(&b, "[%s] %3.0f%%  ", bar, frac*100)
	}
	fmt.Fprintf(&b, "%s", roundDur(p.Elapsed))
	if o.Requests == 0 && o.Duration > 0 {
		fmt.Fprintf(&b, "/%s", roundDur(o.Duration))
	}
	if known {
		eta := "?"
		if left >= 0 {
			eta = roundDur(left).String()
		}
		fmt.Fprintf(&b, "  ETA %s", eta)
	}
	fmt.Fprintf(&b, "  %s req/s  %d errors  p50 %s  p99 %s", fmtRate(p.RPS), p.Failed, results.FormatDuration(p.P50), results.FormatDuration(p.P99))
	return b.String()
}

// progressFraction is how far the run is, in [0, 1], and the time left
// (negative when it cannot be estimated yet: -n before any response).
func progressFraction(p Progress, o Options) (frac float64, left time.Duration, known bool) {
	switch {
	case o.Requests > 0:
		frac = float64(p.Requests) / float64(o.Requests)
		left = -1
		if p.RPS > 0 {
			left = time.Duration(float64(o.Requests-p.Requests) / p.RPS * float64(time.Second))
		}
	case o.Duration > 0:
		frac = float64(p.Elapsed) / float64(o.Duration)
		left = max(o.Duration-p.Elapsed, 0) // the graceful stop runs past the end
	default:
		return 0, 0, false
	}
	frac = min(max(frac, 0), 1)
	return frac, max(left, -1), true
}

func roundDur(d time.Duration) time.Duration {
	if d >= time.Minute {
		return d.Round(time.Second)
	}
	return d.Round(100 * time.Millisecond)
}

// fmtRate prints a rate with about three significant digits: 812, 12.3k.
func fmtRate(r float64) string {
	switch {
	case r >= 1e6:
		return fmt.Sprintf("%.2fM", r/1e6)
	case r >= 1e4:
		return fmt.Sprintf("%.1fk", r/1e3)
	}
	return fmt.Sprintf("%.0f", r)
}
