package report

import (
	"encoding/csv"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"

	"github.com/wirebench/wirebench/results"
	"github.com/wirebench/wirebench/results/stats"
)

// WriteCSV renders report.csv for spreadsheets and scripts. Every column
// that holds a quantity names its unit (req_per_s, p50_ms,
// recv_wire_bytes_per_req, peak_rss_bytes): durations are milliseconds,
// sizes bytes. Rows are of three kinds:
//
//   - "cell": one per cell, every metric summarized over its trials;
//   - "op": one per operation of a cell (scenarios that mix operations),
//     with that operation's requests and its p50_ms and p99_ms;
//   - "payload": one per payload measurement (sizes-only studies);
//   - "payload_lab": one per format and compression of a payload lab run
//     (wirebench payload), and "round_trip" one per change a format's
//     round trip made (payloadlab.go: labCols);
//   - "step": one per step of a cell's capacity searches (the curve):
//     trial, step ("confirm" for the confirmation run), offered_req_per_s,
//     req_per_s (achieved), p50_ms, p99_ms, service_p99_ms, lag_p99_ms,
//     error_pct, client_cpu_pct, verdict (pass, fail, client) and why.
//     These columns, and the capacity metrics', appear only in reports
//     with a capacity search.
//
// A CI bound (_lo, _hi) is empty when there were too few trials for an
// interval; the observed range (_min, _max: the lowest and highest trial)
// is always there. A comparison is empty for the baseline; pct is the
// change of the median whether or not it is significant: scripts decide
// with p, and verdict says what the report concluded (better, worse,
// same, undecided: too few trials for the test to decide).
func WriteCSV(w io.Writer, rep *Report) error {
	w = printableWriter(w)
	cw := safeCSV{csv.NewWriter(w)}
	header := []string{"kind", "group", "cell", "label", "baseline", "operation", "trials", "failed_trials", "requests", "failed_requests"}
	col := map[string]int{} // metric CSV name → first column
	metrics := csvMetrics(rep)
	for _, m := range metrics {
		col[m.CSV] = len(header)
		header = append(header, m.CSV, m.CSV+"_lo", m.CSV+"_hi", m.CSV+"_min", m.CSV+"_max", m.CSV+"_n")
		if vsMetrics[m.Key] {
			header = append(header, m.CSV+"_vs_base_pct", m.CSV+"_vs_base_p", m.CSV+"_vs_base_verdict")
		}
	}
	payloadCols := []string{"dataset", "items", "format", "transport", "compression", "body_bytes", "coded_bytes", "wire_bytes"}
	payloadAt := len(header)
	header = append(header, payloadCols...)
	answerAt := len(header) // the comparison in the question's unit (answer.go), whichever metric that is
	header = append(header, answerCols...)
	stepAt := len(header)
	if len(metrics) > len(Metrics)-countOptional() { // the capacity curve's columns
		header = append(header, stepCols...)
	}
	labAt := len(header)
	if rep.Results.PayloadLab != nil { // only in a payload lab's report
		header = append(header, labCols...)
	}
	_ = cw.Write(header) // errors surface from Flush/Error below
	put := func(row []string, at int, m Metric, s stats.Summary) {
		d := csvDivisor(m.Unit)
		copy(row[at:], []string{num(s.Center / d), num(s.Lo / d), num(s.Hi / d), num(s.Min / d), num(s.Max / d), itoa(s.N)})
	}
	for _, g := range rep.Groups {
		for i, c := range g.Cells {
			row := make([]string, len(header))
			copy(row, []string{"cell", g.Name, c.Cell.ID, c.Cell.Label, strconv.FormatBool(i == 0 && len(g.Cells) > 1), "",
				itoa(c.Trials), itoa(c.FailedTrials), strconv.FormatInt(c.Requests, 10), strconv.FormatInt(c.Failed, 10)})
			for _, m := range metrics {
				at := col[m.CSV]
				if s, ok := c.Stat(m.Key); ok {
					put(row, at, m, s)
				} else {
					row[at+5] = "0"
				}
				if !vsMetrics[m.Key] || !g.compares(m.Key) {
					continue
				}
				if d, ok := g.VsBaseline(i, m.Key); ok {
					v, _ := judge(d, "", m.HigherIsBetter)
					copy(row[at+6:], []string{num(d.Pct()), num(d.P), verdictName[v]})
				}
			}
			putAnswer(row[answerAt:], g, i)
			_ = cw.Write(row)
			for _, op := range c.Ops {
				row := make([]string, len(header))
				copy(row, []string{"op", g.Name, c.Cell.ID, c.Cell.Label, strconv.FormatBool(i == 0 && len(g.Cells) > 1), op.Name,
					itoa(c.Trials), "", strconv.FormatInt(op.Requests, 10), strconv.FormatInt(op.Failed, 10)})
				for _, om := range opMetrics {
					m, _ := MetricByKey("lat_" + om.Key)
					if s, ok := op.Stats[om.Key]; ok {
						put(row, col[m.CSV], m, s)
					}
				}
				_ = cw.Write(row)
			}
			writeStepRows(cw, g, i, c, len(header), stepAt, col)
		}
	}
	for _, p := range rep.Results.Payloads {
		row := make([]string, payloadAt, len(header))
		row[0] = "payload"
		row = append(row, p.Dataset, itoa(p.N), p.Format, p.Transport, p.Compression,
			strconv.FormatInt(p.Body, 10), codedCell(p), strconv.FormatInt(p.Wire, 10))
		_ = cw.Write(row)
	}
	if p := rep.Results.PayloadLab; p != nil {
		for _, lr := range labCSVRows(p) {
			row := make([]string, labAt, len(header))
			row[0] = lr[0]
			_ = cw.Write(append(row, lr[1:]...))
		}
	}
	cw.Flush()
	if err := cw.Error(); err != nil {
		return fmt.Errorf("report: write csv: %w", err)
	}
	return nil
}

// safeCSV writes rows with every cell made safe to open in a spreadsheet.
type safeCSV struct{ *csv.Writer }

func (s safeCSV) Write(row []string) error {
	for i, c := range row {
		row[i] = csvSafe(c)
	}
	return s.Writer.Write(row)
}

// csvSafe defuses formula injection (OWASP, "CSV Injection"): a cell that
// starts with = + - @, a tab or a carriage return is read by spreadsheets
// as a formula (=cmd|' /C calc'!A0 runs a program), so it gets a leading
// single quote, which they show as text. Cell and group names come from
// study files and load targets: anyone's text. Numbers are left alone: a
// negative change (-3.2) is data, and no number is a formula.
func csvSafe(c string) string {
	if c == "" || !strings.ContainsRune("=+-@\t\r", rune(c[0])) {
		return c
	}
	if _, err := strconv.ParseFloat(c, 64); err == nil && !strings.ContainsAny(c, "\t\r") {
		return c
	}
	return "'" + c
}

var verdictName = map[Verdict]string{Better: "better", Worse: "worse", Same: "same", Undecided: "undecided", NoData: ""}

// csvDivisor converts a metric's base unit to its CSV column's unit:
// nanoseconds to milliseconds; rates and bytes stay. (Dividing by 1e6
// prints 0.828 where multiplying by 1e-6 may print 0.8280000000000001.)
func csvDivisor(u Unit) float64 {
	if u == UnitDuration {
		return 1e6
	}
	return 1
}

// codedCell is the body after content coding, empty when uncompressed or
// not known (gRPC compresses inside its own framing).
func codedCell(p results.Payload) string {
	if p.Coded <= 0 {
		return ""
	}
	return strconv.FormatInt(p.Coded, 10)
}

func itoa(n int) string { return strconv.Itoa(n) }

// num prints a float exactly enough to round-trip; empty for NaN and ±Inf.
func num(v float64) string {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return ""
	}
	return strconv.FormatFloat(v, 'f', -1, 64)
}
