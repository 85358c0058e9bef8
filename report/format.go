package report

import (
	"github.com/wirebench/wirebench/measure"
	"github.com/wirebench/wirebench/results"
	"github.com/wirebench/wirebench/results/stats"

	"fmt"
	"math"
	"strconv"
	"strings"
	"time"
)

// formatValue prints one number of a metric for people (Unit.Format).
func formatValue(u Unit, v float64) string { return u.Format(v) }

// formatSummary prints a median with its spread. With enough trials for a
// 95% CI that is benchstat's "median ± x%" (x is the larger distance from
// the median to an end of the interval). With fewer (quick runs, the
// default 5 trials) no interval exists, and "± ∞" told the reader nothing,
// so we show what was observed instead: the lowest and highest trial in
// brackets, "5.501k [3.98–7.03k]". Brackets, never "±", so a range is not
// mistaken for an interval.
func formatSummary(u Unit, s stats.Summary) string {
	if s.N == 0 {
		return "—"
	}
	c := formatValue(u, s.Center)
	if s.N == 1 {
		return c // one trial (a plain load run): a number, no spread
	}
	if !s.HasCI() {
		return c + " " + formatRange(u, s)
	}
	return fmt.Sprintf("%s ± %s", c, formatPct(s.HalfWidth()*100))
}

// spreadNote explains formatSummary's two notations; the Markdown and
// HTML legends both use it, so they cannot drift apart.
func spreadNote() string {
	return fmt.Sprintf("Each number is the median over trials with its spread: "+
		"\"± x%%\" is the larger distance to an end of its %v%% confidence interval (%d or more trials); "+
		"\"[lo–hi]\" is the lowest and highest trial, shown instead when there are too few trials for an interval.",
		stats.Confidence*100, stats.MinCISamples(stats.Confidence))
}

// formatRange prints the observed range of a summary without an interval:
// "[3.98–7.03k]" (the unit once when both ends share it), "[n=1]" for a
// single trial, "[all equal]" when every trial gave the same number.
func formatRange(u Unit, s stats.Summary) string {
	if s.N == 1 {
		return "[n=1]"
	}
	lo, loUnit := splitUnit(trimZeros(formatValue(u, s.Min)))
	hi, hiUnit := splitUnit(trimZeros(formatValue(u, s.Max)))
	switch {
	case lo == hi && loUnit == hiUnit: // equal as printed, if not in the last bit
		return "[all equal]"
	case loUnit == hiUnit:
		return "[" + lo + "–" + hi + hiUnit + "]"
	}
	return "[" + lo + loUnit + "–" + hi + hiUnit + "]"
}

// splitUnit splits "1.5 KiB" into "1.5" and " KiB".
func splitUnit(s string) (num, unit string) {
	i := strings.IndexFunc(s, func(r rune) bool { return (r < '0' || r > '9') && r != '.' && r != '-' })
	if i < 0 {
		return s, ""
	}
	return s[:i], s[i:]
}

func formatPct(p float64) string {
	switch {
	case math.IsInf(p, 0) || math.IsNaN(p):
		return "?" // callers print a range instead; never "∞"
	case p < 10:
		return strconv.FormatFloat(p, 'f', 1, 64) + "%"
	}
	return strconv.FormatFloat(p, 'f', 0, 64) + "%"
}

// formatSI prints a count or rate: 281.9, 12.35k, 1.235M.
func formatSI(v float64) string { return results.FormatSI(v) }

// sig4 is the four-significant-digit form every number in reports and the
// load summary uses.
func sig4(v float64) string { return measure.Sig4(v) }

// formatDuration prints 748.6µs, 27.84ms, 1.235s.
func formatDuration(d time.Duration) string { return results.FormatDurationSig4(d) }

// formatBytes is measure.FormatBytes: one unit convention (IEC) in
// reports and the load summary alike.
func formatBytes(v float64) string { return measure.FormatBytes(v) }

// formatInt prints an integer with thousands separators: 59,395.
func formatInt(n int64) string { return results.FormatInt(n) }

// formatChecks prints "59,395 (100% passed)" in k6's manner, with the
// exact failed count when any failed (a rounded 100.0% would hide them),
// and the study's check commands after the load: "; check 6/6 ok".
func formatChecks(c CellSummary) string {
	var out string
	switch {
	case c.Requests == 0:
		out = "—"
	case c.Failed == 0:
		out = formatInt(c.Requests) + " (100% passed)"
	default:
		out = fmt.Sprintf("%s (%s failed)", formatInt(c.Requests), formatInt(c.Failed))
	}
	if c.CheckRuns > 0 {
		if c.CheckFailed == 0 {
			out += fmt.Sprintf("; check %d/%d ok", c.CheckRuns, c.CheckRuns)
		} else {
			out += fmt.Sprintf("; check %d of %d failed", c.CheckFailed, c.CheckRuns)
		}
	}
	return out
}

// formatVs prints a comparison for a table cell: "+12.30% (p=0.008)" or
// "~ (p=0.420)".
func formatVs(d stats.Delta) string {
	return fmt.Sprintf("%s (p=%.3f)", d.FormatDelta(), d.P)
}
