package report

import (
	"bufio"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/wirebench/wirebench/results"
)

// A plain load run is one trial: a number without a spread. Two of them
// can be set side by side and their difference printed, but a single run
// each cannot tell a change from noise, so no significance is claimed
// and no "~" is printed either (that would claim "no difference").

// SingleRunNote is what every comparison of single runs says.
const SingleRunNote = "single run each: no significance claimed"

// singleNote is a single-run file's headline note: what it is and why no
// significance is claimed. A file wirebench merge made from the segments
// of one test (or, --unchecked, from several runs) says so: it is one
// test's figures, still without a spread across runs.
func singleNote(r *results.Study) string {
	if what := mergedFrom(r); what != "" {
		return "One test " + what + ": no spread across repeated runs, so no significance can be claimed from it."
	}
	return "A single run: no spread, so no significance can be claimed from it."
}

// mergedFrom says what a merged single-run file was merged from ("merged
// from 2 segments (1/2, 2/2)"); "" for a file of one run.
func mergedFrom(r *results.Study) string {
	l, ok := singleRun(r)
	if !ok || len(l.Segments) < 2 {
		return ""
	}
	what := "runs"
	if slices.ContainsFunc(l.Segments, func(s string) bool { return s != "1/1" }) {
		what = "segments"
	}
	return fmt.Sprintf("merged from %d %s (%s)", len(l.Segments), what, strings.Join(l.Segments, ", "))
}

// runMetric is one number of a single load run.
type runMetric struct {
	Name           string
	Unit           Unit
	HigherIsBetter bool
	Value          func(r *results.Load) (float64, bool)
}

func runLatency(q float64) func(*results.Load) (float64, bool) {
	return func(r *results.Load) (float64, bool) {
		if r.Latency == nil || r.Latency.Count() == 0 {
			return 0, false
		}
		switch {
		case q < 0:
			return float64(r.Latency.Mean()), true
		case q >= 1:
			return float64(r.Latency.Max()), true
		}
		return float64(r.Latency.Quantile(q)), true
	}
}

func runPerRequest(count func(*results.Load) int64) func(*results.Load) (float64, bool) {
	return func(r *results.Load) (float64, bool) {
		if r.Requests == 0 {
			return 0, false
		}
		return float64(count(r)) / float64(r.Requests), true
	}
}

// runMetrics are the rows of a single-run comparison: rates, the latency
// distribution, checks, bytes and the client's cost.
var runMetrics = []runMetric{
	{"req/s", UnitRate, true, func(r *results.Load) (float64, bool) { return r.RPS(), r.Elapsed() > 0 }},
	{"requests", UnitCount, true, func(r *results.Load) (float64, bool) { return float64(r.Requests), true }},
	{"failed", UnitCount, false, func(r *results.Load) (float64, bool) { return float64(r.Failed), true }},
	{"avg", UnitDuration, false, runLatency(-1)},
	{"p50", UnitDuration, false, runLatency(0.50)},
	{"p90", UnitDuration, false, runLatency(0.90)},
	{"p99", UnitDuration, false, runLatency(0.99)},
	{"p99.9", UnitDuration, false, runLatency(0.999)},
	{"max", UnitDuration, false, runLatency(1)},
	{"recv body/req", UnitBytes, false, runPerRequest(func(r *results.Load) int64 { return r.Bytes.BodyIn })},
	{"recv wire/req", UnitBytes, false, runPerRequest(func(r *results.Load) int64 { return r.Bytes.WireIn })},
	{"sent wire/req", UnitBytes, false, runPerRequest(func(r *results.Load) int64 { return r.Bytes.WireOut })},
	{"client CPU/req", UnitDuration, false, func(r *results.Load) (float64, bool) {
		return float64(r.CPUPerRequest()), r.Requests > 0 && r.CPU.User+r.CPU.System > 0
	}},
}

// singleRun is the load result of a single-run study (its one trial).
func singleRun(r *results.Study) (*results.Load, bool) {
	if !r.SingleRun || len(r.Trials) != 1 || r.Trials[0].Load == nil {
		return nil, false
	}
	return r.Trials[0].Load, true
}

// RunRow is one metric of two single runs set side by side.
type RunRow struct {
	Metric   string
	Old, New string
	// Change is the difference in percent, "" when either is missing or
	// the old value is zero.
	Change string
}

// CompareRuns sets two single load runs side by side: every metric with
// the change in percent, and what makes the comparison unfair (different
// machines, targets, load models or concurrency).
func CompareRuns(old, new *results.Load) ([]RunRow, []string) {
	var rows []RunRow
	for _, m := range runMetrics {
		o, okO := m.Value(old)
		n, okN := m.Value(new)
		if !okO && !okN {
			continue
		}
		row := RunRow{Metric: m.Name, Old: "—", New: "—"}
		if okO {
			row.Old = formatValue(m.Unit, o)
		}
		if okN {
			row.New = formatValue(m.Unit, n)
		}
		if okO && okN && o != 0 {
			row.Change = fmt.Sprintf("%+.1f%%", (n/o-1)*100)
		}
		rows = append(rows, row)
	}
	var warnings []string
	diff := func(name, a, b string) {
		if a != b {
			warnings = append(warnings, fmt.Sprintf("runs differ: %s %s vs %s", name, a, b))
		}
	}
	diff("scenario", old.Scenario, new.Scenario)
	diff("transport", results.LoadProtocol(old), results.LoadProtocol(new))
	diff("load model", LoadModel(old.Options), LoadModel(new.Options))
	if a, b := results.LoadTarget(old), results.LoadTarget(new); a != "" && b != "" {
		diff("target", a, b)
	}
	for i, r := range []*results.Load{old, new} {
		side := [2]string{"old", "new"}[i]
		if r.Stop != nil && r.Stop.Interrupted && !slices.ContainsFunc(r.Warnings, func(w string) bool { return strings.HasPrefix(w, "interrupted") }) {
			warnings = append(warnings, fmt.Sprintf("the %s run was interrupted (%s): its figures cover a cut-short window", side, cmpOr(r.Stop.Signal, "signal")))
		}
		if FailedThresholds(r) {
			warnings = append(warnings, fmt.Sprintf("the %s run failed its thresholds", side))
		}
		if r.Link != nil {
			if w := r.Link.Relay.Warning(); w != "" {
				warnings = append(warnings, fmt.Sprintf("the %s run: %s", side, w))
			}
		}
	}
	for _, r := range []*results.Load{old, new} {
		for _, w := range r.Warnings {
			if !slices.Contains(warnings, w) {
				warnings = append(warnings, w)
			}
		}
	}
	return rows, warnings
}

// writeRunCompare prints two single runs side by side.
func writeRunCompare(w io.Writer, oldName, newName string, old, new *results.Load) error {
	rows, warnings := CompareRuns(old, new)
	bw := bufio.NewWriter(w)
	fmt.Fprintf(bw, "wirebench compare: %s\n\n", SingleRunNote)
	nc := results.NotComparable(old.Env, new.Env)
	if nc != "" {
		fmt.Fprintf(bw, "%s\n\n", nc)
	}
	for _, side := range []struct {
		name string
		r    *results.Load
	}{{oldName, old}, {newName, new}} {
		for _, v := range RunVerdict(side.r) { // a side that failed or was cut short is said first
			fmt.Fprintf(bw, "  %s %s\n", side.name, v)
		}
	}
	for _, side := range []struct {
		name string
		r    *results.Load
	}{{oldName, old}, {newName, new}} {
		fmt.Fprintf(bw, "  %s: %s, %s, %v\n", side.name, runWhat(side.r), LoadModel(side.r.Options), side.r.Elapsed().Round(time.Millisecond))
	}
	if lo, ln := LinkName(old.Link), LinkName(new.Link); lo != ln || old.Link != nil {
		fmt.Fprintf(bw, "  link: %s %s, %s %s", oldName, lo, newName, ln)
		if lo != ln {
			fmt.Fprint(bw, ": different links, so a difference measures the links too")
		}
		fmt.Fprintln(bw)
	}
	fmt.Fprintln(bw)
	tw := tabwriter.NewWriter(bw, 0, 4, 2, ' ', 0)
	fmt.Fprintf(tw, "\t%s\t%s\tchange\n", oldName, newName)
	for _, r := range rows {
		if nc != "" {
			r.Change = "" // a change between machines is no change of the code
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", r.Metric, r.Old, r.New, orDash(r.Change))
	}
	if err := tw.Flush(); err != nil {
		return fmt.Errorf("report: write comparison: %w", err)
	}
	if len(warnings) > 0 {
		fmt.Fprintln(bw, "\nwarnings:")
		for _, w := range warnings {
			fmt.Fprintf(bw, "  %s\n", w)
		}
	}
	fmt.Fprintf(bw, "\nchange: %s vs %s. %s: one run of each has no spread, so a change may be noise; "+
		"run a study (several interleaved trials) to decide.\n", newName, oldName, strings.ToUpper(SingleRunNote[:1])+SingleRunNote[1:])
	if err := bw.Flush(); err != nil {
		return fmt.Errorf("report: write comparison: %w", err)
	}
	return nil
}

// runWhat is a run's scenario and the protocol it ran on: "raw, HTTP/3
// over QUIC (h3)".
func runWhat(r *results.Load) string {
	if p := results.LoadProtocol(r); p != "" {
		return r.Scenario + ", " + p
	}
	return r.Scenario
}

// LoadModel says how load was applied: "closed loop, 20 VUs" or "open
// loop at 1000 req/s, up to 50 in flight".
func LoadModel(o results.Options) string {
	m := loadModel(o)
	if a := results.ArrivalsText(o.Arrivals, o.Seed); a != "" {
		m += ", " + a
	}
	return m
}

func loadModel(o results.Options) string {
	open := o.Rate > 0 || o.Open
	switch {
	case open && len(o.Stages) > 0:
		return fmt.Sprintf("open loop, ramping rate, up to %d in flight", o.Concurrency)
	case open && o.Rate == 0: // an explicit schedule: a replay's
		return fmt.Sprintf("open loop, recorded schedule, up to %d in flight", o.Concurrency)
	case open:
		return fmt.Sprintf("open loop at %s req/s, up to %d in flight", trimZeros(formatSI(o.Rate)), o.Concurrency)
	case len(o.Stages) > 0:
		return fmt.Sprintf("closed loop, ramping to %s", vus(o.Concurrency))
	}
	return "closed loop, " + vus(o.Concurrency)
}

func vus(n int) string {
	if n == 1 {
		return "1 VU"
	}
	return fmt.Sprintf("%d VUs", n)
}

// latencyDistribution is a single run's latency by percentile, as wrk
// --latency prints it: the table beside the plot.
func latencyDistribution(r *results.Load) table {
	t := table{Header: []string{"percentile", "latency"}}
	if r.Latency == nil || r.Latency.Count() == 0 {
		return t
	}
	for _, q := range []float64{0.5, 0.75, 0.9, 0.95, 0.99, 0.999, 0.9999} {
		name := strings.TrimSuffix(strings.TrimRight(fmt.Sprintf("p%.2f", q*100), "0"), ".")
		t.Rows = append(t.Rows, []string{name, formatValue(UnitDuration, float64(r.Latency.Quantile(q)))})
	}
	t.Rows = append(t.Rows, []string{"max", formatValue(UnitDuration, float64(r.Latency.Max()))})
	return t
}

// slowestTable names a single run's slowest requests (--slowest, with
// --traceparent their trace IDs): each can be found in the server's logs
// by its trace ID, or by its start time and the client's port.
func slowestTable(r *results.Load) table {
	t := table{Header: []string{"latency", "op", "status", "start (UTC)", "client port", "trace ID"}}
	if r.Exemplars == nil {
		return t
	}
	t.Rows = slowestRows(r.Exemplars.Slowest)
	return t
}

// groupSlowestTable names each cell's slowest requests over its trials.
func groupSlowestTable(g Group) table {
	t := table{Header: []string{"cell", "latency", "op", "status", "start (UTC)", "client port", "trace ID"}}
	for _, c := range g.Cells {
		if c.Slowest == nil {
			continue
		}
		for _, row := range slowestRows(c.Slowest.Slowest) {
			t.Rows = append(t.Rows, append([]string{c.Cell.Label}, row...))
		}
	}
	return t
}

func slowestRows(es []results.Exemplar) [][]string {
	var rows [][]string
	for _, e := range es {
		status := e.Status
		if e.Fail != "" {
			status += " (" + e.Fail + ")"
		}
		port := ""
		if e.Conn > 0 {
			port = strconv.Itoa(e.Conn)
		}
		rows = append(rows, []string{formatValue(UnitDuration, float64(e.Latency)), e.Op, status,
			e.Start.UTC().Format("15:04:05.000000"), port, cmpOr(e.TraceID, "—")})
	}
	return rows
}

func cmpOr(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

// LinkName is the network a run went through: its --link spec (the
// preset's name first), or loopback.
func LinkName(l *results.Link) string {
	switch {
	case l == nil:
		return "loopback"
	case l.Preset != "":
		return l.Preset + " (" + l.Effective + ")"
	}
	return l.Effective
}
