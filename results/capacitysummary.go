package results

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"
)

// FormatRate prints a rate in requests per second with up to four
// significant digits: 4,870/s, 12.5/s.
func FormatRate(r float64) string {
	switch {
	case r >= 100:
		return fmt.Sprintf("%s/s", FormatInt(int64(r+0.5)))
	case r >= 10:
		return fmt.Sprintf("%.1f/s", r)
	}
	return fmt.Sprintf("%.2f/s", r)
}

// CapacityLine is the answer in one line: "4,870/s at p99<20ms [4,870…5,100)".
func CapacityLine(c *Capacity) string {
	slo := strings.Join(c.SLO, ", ")
	switch c.Limit {
	case LimitFailed:
		causes, n := c.Causes()
		if len(causes) == 0 {
			return "none: no request completed at any rate tried (the target never answered)"
		}
		return fmt.Sprintf("none: no request succeeded at any rate tried: %s of %d requests", CausesLine(causes, n), n)
	case LimitMinRate:
		return fmt.Sprintf("no rate met %s: even %s failed", slo, FormatRate(c.High))
	case LimitMaxRate:
		return fmt.Sprintf("≥ %s at %s: every rate up to --max-rate met it%s", FormatRate(c.Rate), slo, arrivalsNote(c))
	case LimitClient:
		if c.Rate == 0 {
			return fmt.Sprintf("unknown: the client could not keep up even at %s", FormatRate(c.ClientLimit))
		}
		return fmt.Sprintf("≥ %s at %s: the client was the limit at %s, not the server%s", FormatRate(c.Rate), slo, FormatRate(c.ClientLimit), arrivalsNote(c))
	case LimitTime:
		switch {
		case c.Rate == 0 && c.High > 0:
			return fmt.Sprintf("none: the search ran out of time before any rate met %s; the lowest tried, %s, failed", slo, FormatRate(c.High))
		case c.Rate == 0:
			return fmt.Sprintf("none: the search ran out of time before any rate was judged against %s", slo)
		case c.High == 0:
			return fmt.Sprintf("≥ %s at %s (the search ran out of time)%s", FormatRate(c.Rate), slo, arrivalsNote(c))
		}
	}
	return fmt.Sprintf("%s at %s [%s…%s)%s", FormatRate(c.Rate), slo, FormatRate(c.Low), FormatRate(c.High), arrivalsNote(c))
}

// arrivalsNote is the arrival process an answer holds under, beside it.
func arrivalsNote(c *Capacity) string {
	if a := ArrivalsText(c.Search.Arrivals, c.Search.Seed); a != "" {
		return ", " + a
	}
	return ""
}

// WriteCapacitySummary prints a search's steps and its answer, warnings
// last.
func WriteCapacitySummary(w io.Writer, c *Capacity) error {
	ew := &errWriter{w: w}
	fmt.Fprintf(ew, "capacity search: %s, SLO %s, %d steps of %v after %v warm-up, precision %.3g%%%s\n\n",
		orUnknown(c.Scenario), strings.Join(c.SLO, ", "), len(c.Steps), c.Search.StepDuration, c.Search.Warmup, 100*c.Search.Precision, arrivalsNote(c))
	tw := tabwriter.NewWriter(ew, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "step\toffered\tachieved\tp50\tp99\tservice p99\tlag p99\terrors\tclient CPU\tserver CPU/req\tverdict\t")
	row := func(name string, s *CapacityStep) {
		srv := "—"
		if s.ServerCPUPerRequest > 0 {
			srv = FormatDuration(s.ServerCPUPerRequest)
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%.2f%%\t%.0f%%\t%s\t%s\t\n", name, FormatRate(s.Offered), FormatRate(s.Achieved),
			FormatDuration(s.P50), FormatDuration(s.P99), FormatDuration(s.ServiceP99), FormatDuration(s.LagP99),
			100*s.ErrorRate(), 100*s.ClientCPU, srv, s.Verdict)
	}
	for i := range c.Steps {
		row(fmt.Sprint(i+1), &c.Steps[i])
	}
	if c.Confirm != nil {
		row("confirm", c.Confirm)
	}
	tw.Flush()
	fmt.Fprintln(ew)
	for i := range c.Steps {
		if s := &c.Steps[i]; !s.Passed() {
			fmt.Fprintf(ew, "  %s: %s %s\n", FormatRate(s.Offered), s.Verdict, s.Why)
			if len(s.Disturbed) > 0 {
				again := ""
				if s.Retried {
					again = ": measured again"
				}
				fmt.Fprintf(ew, "      disturbed: %s%s\n", strings.Join(s.Disturbed, "; "), again)
			}
		}
		if s := &c.Steps[i]; s.Failed > 0 && !strings.Contains(s.Why, CausesLine(s.Failures, s.Requests)) {
			fmt.Fprintf(ew, "  %s: failures: %s\n", FormatRate(s.Offered), CausesLine(s.Failures, s.Requests))
		}
	}
	fmt.Fprintf(ew, "\n  capacity: %s\n", CapacityLine(c))
	if u := c.Untrusted(); u != "" && c.Limit != LimitClient {
		fmt.Fprintf(ew, "  NOT TRUSTED (%s): %s\n", u, strings.Join(c.Disturbed, "; "))
	}
	if q := c.ServerQuota; q != nil {
		fmt.Fprintf(ew, "  server CPU quota: %s, %s: %s per core of the quota\n", q, q.Why(), FormatRate(c.PerCore()))
	}
	if c.ServerCPUPerRequest > 0 {
		fmt.Fprintf(ew, "  server CPU: %s per request at that rate, %s per core\n", FormatDuration(c.ServerCPUPerRequest), FormatRate(1/c.ServerCPUPerRequest.Seconds()))
	}
	if c.Limit == LimitClient {
		fmt.Fprintf(ew, "  the client cannot answer: it was the limit before the server. Give the server a CPU quota (--server-pid PID, --server-cpu-quota auto) or the client more CPU (--cpu, another machine)\n")
	}
	if c.Confirm != nil && c.Confirm.Load != nil {
		fmt.Fprintf(ew, "  confirmed: %s over %v (%s)\n", yesNo(c.Confirm.Passed()), c.Confirm.Load.Options.Duration.Round(time.Millisecond), c.Confirm.Why)
	}
	for _, w := range c.Warnings {
		fmt.Fprintf(ew, "  WARNING: %s\n", w)
	}
	return ew.err
}

func orUnknown(s string) string {
	if s == "" {
		return "?"
	}
	return s
}

func yesNo(b bool) string {
	if b {
		return "yes"
	}
	return "no"
}
