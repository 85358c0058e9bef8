package results

import (
	"fmt"
	"io"
	"sort"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/wirebench/wirebench/measure"
)

// WriteSummary prints the end-of-run summary: what a k6 or wrk user reads
// at a glance, with the client's own CPU and lag, and warnings last so
// they are not scrolled past.
func WriteSummary(w io.Writer, r *Load) error {
	ew := &errWriter{w: w}
	o := r.Options
	loop := fmt.Sprintf("closed loop, %d VUs", o.Concurrency)
	if o.OpenLoop() {
		loop = fmt.Sprintf("open loop, %g req/s, up to %d in flight", o.Rate, o.Concurrency)
		if len(o.Stages) > 0 {
			loop = fmt.Sprintf("open loop, ramping rate, up to %d in flight", o.Concurrency)
		} else if o.Rate == 0 { // an explicit schedule: a replay's
			loop = fmt.Sprintf("open loop, recorded schedule, up to %d in flight", o.Concurrency)
		}
	} else if len(o.Stages) > 0 {
		loop = fmt.Sprintf("closed loop, ramping to %d VUs", o.Concurrency)
	}
	if a := ArrivalsText(o.Arrivals, o.Seed); a != "" {
		loop += ", " + a
	}
	seg := ""
	if len(r.Segments) > 0 {
		seg = ", merged segments " + strings.Join(r.Segments, " ")
	} else if o.Segment.N > 1 {
		seg = ", segment " + o.Segment.String()
	}
	span := fmt.Sprintf("%v", r.Elapsed().Round(time.Millisecond))
	if m := r.Measured(); m < r.Elapsed()-time.Millisecond {
		span = fmt.Sprintf("rates over the %v window of -d (%v with the graceful stop)",
			m.Round(time.Millisecond), r.Elapsed().Round(time.Millisecond))
	}
	proto := ""
	if p := LoadProtocol(r); p != "" {
		proto = ", " + p
	}
	if r.Iterations != nil { // the schedule's unit is the iteration
		loop = strings.Replace(loop, " req/s", " iterations/s", 1)
	}
	ew.printf("wirebench load: %s%s, %s%s, %s\n\n", r.Scenario, proto, loop, seg, span)
	if it := r.Iterations; it != nil {
		rate := 0.0
		if it.Count > 0 {
			rate = 100 * float64(it.Failed) / float64(it.Count)
		}
		ew.printf("  iterations    %d   %.1f/s   failed %d (%.2f%%)", it.Count, r.IPS(), it.Failed, rate)
		if it.Interrupted > 0 {
			ew.printf("   interrupted %d", it.Interrupted)
		}
		ew.printf("\n")
	}
	ew.printf("  requests      %d   %.1f/s   failed %d (%.2f%%)\n", r.Requests, r.RPS(), r.Failed, 100*r.ErrorRate())
	if r.Interrupted > 0 {
		ew.printf("  interrupted   %d (in flight at the end, not counted)\n", r.Interrupted)
	}
	name := "latency"
	if o.OpenLoop() {
		name = "latency (from intended send)"
	}
	ew.printf("\n  %-30s %s\n", "", "avg      min      p50      p90      p95      p99      p99.9    max")
	ew.printf("  %-30s %s\n", name, quantiles(r.Latency))
	if o.OpenLoop() {
		ew.printf("  %-30s %s\n", "service time", quantiles(r.Service))
		ew.printf("  %-30s %s\n", "schedule lag", quantiles(r.Lag))
	}
	if it := r.Iterations; it != nil {
		name := "iteration"
		if o.OpenLoop() {
			name = "iteration (from its schedule)"
		}
		ew.printf("  %-30s %s\n", name, quantiles(it.Latency))
	}

	if len(r.Ops) > 1 || (len(r.Ops) == 1 && r.Ops[0].Failed > 0) {
		ew.printf("\n")
		tw := tabwriter.NewWriter(ew, 0, 0, 2, ' ', tabwriter.AlignRight)
		fmt.Fprintf(tw, "  operation\trequests\tchecks ok\tfailed\tp50\tp99\t\n")
		for _, op := range r.Ops {
			ok := "✓"
			if op.Failed > 0 {
				ok = "✗"
			}
			fmt.Fprintf(tw, "  %s %s\t%d\t%d\t%d\t%v\t%v\t\n", ok, op.Name, op.Requests, op.Requests-op.Failed,
				op.Failed, FormatDuration(op.Latency.Quantile(0.5)), FormatDuration(op.Latency.Quantile(0.99)))
		}
		tw.Flush()
	}

	ew.printf("\n  status        %s\n", countList(r.Status))
	if len(r.Failures) > 0 {
		ew.printf("  failures by cause\n")
		for _, c := range FailureCauses(r.Failures) {
			ew.printf("    %8d  %s\n", c.Count, c)
		}
	}
	b := r.Bytes
	secs := r.Measured().Seconds()
	ew.printf("  bytes in      %s wire = %s body + %s framing   %s/s\n",
		fmtBytes(b.WireIn), fmtBytes(b.BodyIn), fmtBytes(b.WireIn-b.BodyIn), fmtBytes(int64(float64(b.WireIn)/max(secs, 1e-9))))
	ew.printf("  bytes out     %s wire = %s body + %s framing   %s/s\n",
		fmtBytes(b.WireOut), fmtBytes(b.BodyOut), fmtBytes(b.WireOut-b.BodyOut), fmtBytes(int64(float64(b.WireOut)/max(secs, 1e-9))))
	ew.printf("  client CPU    %v user + %v sys = %.0f%% of %d CPUs, %.1f µs/request\n",
		r.CPU.User.Round(time.Millisecond), r.CPU.System.Round(time.Millisecond), 100*r.CPUUtil(), r.CPU.CPUs,
		float64(r.CPUPerRequest())/float64(time.Microsecond))
	for _, w := range r.Warnings {
		ew.printf("\nWARNING: %s", w)
	}
	if len(r.Warnings) > 0 {
		ew.printf("\n")
	}
	return ew.err
}

func quantiles(h *measure.Histogram) string {
	if h.Count() == 0 {
		return "-"
	}
	var sb strings.Builder
	for _, d := range []time.Duration{h.Mean(), h.Min(), h.Quantile(.5), h.Quantile(.9), h.Quantile(.95),
		h.Quantile(.99), h.Quantile(.999), h.Max()} {
		fmt.Fprintf(&sb, "%-9s", FormatDuration(d))
	}
	return strings.TrimSpace(sb.String())
}

// FormatDuration prints 3 significant digits, as the histogram holds.
func FormatDuration(d time.Duration) string {
	switch {
	case d >= time.Second:
		return strconv.FormatFloat(d.Seconds(), 'f', 2, 64) + "s"
	case d >= time.Millisecond:
		return strconv.FormatFloat(float64(d)/1e6, 'f', 2, 64) + "ms"
	}
	return strconv.FormatFloat(float64(d)/1e3, 'f', 0, 64) + "µs"
}

func fmtBytes(n int64) string { return measure.FormatBytes(float64(n)) }

type kv struct {
	k string
	n int64
}

func sortedCounts(m map[string]int64) []kv {
	out := make([]kv, 0, len(m))
	for k, n := range m {
		out = append(out, kv{k, n})
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].n != out[j].n {
			return out[i].n > out[j].n
		}
		return out[i].k < out[j].k
	})
	return out
}

func countList(m map[string]int64) string {
	var parts []string
	for _, kv := range sortedCounts(m) {
		parts = append(parts, fmt.Sprintf("%s×%d", kv.k, kv.n))
	}
	return strings.Join(parts, "  ")
}

// errWriter keeps the first write error so the summary code stays flat.
type errWriter struct {
	w   io.Writer
	err error
}

func (e *errWriter) Write(p []byte) (int, error) {
	if e.err != nil {
		return 0, e.err
	}
	n, err := e.w.Write(p)
	e.err = err
	return n, err
}

func (e *errWriter) printf(format string, a ...any) { fmt.Fprintf(e, format, a...) }
