package report

import (
	"encoding/csv"
	"fmt"
	"io"
	"math"
	"strconv"
)

// WriteCSV renders report.csv for spreadsheets and scripts: one row per
// cell (kind "cell") and one per payload measurement (kind "payload"),
// with raw numbers in base units (req/s, nanoseconds, bytes). A CI bound
// (_lo, _hi) is empty when there were too few trials for an interval; the
// observed range (_min, _max: the lowest and highest trial) is always
// there, as the Markdown and HTML show it in that case; a comparison is
// empty for the baseline. pct is the change of the median whether or not
// it is significant: scripts decide with p.
func WriteCSV(w io.Writer, rep *Report) error {
	cw := csv.NewWriter(w)
	header := []string{"kind", "group", "cell", "label", "trials", "failed_trials", "requests", "failed_requests"}
	for _, m := range Metrics {
		header = append(header, m.Key, m.Key+"_lo", m.Key+"_hi", m.Key+"_min", m.Key+"_max", m.Key+"_n")
		if vsMetrics[m.Key] {
			header = append(header, m.Key+"_vs_base_pct", m.Key+"_vs_base_p")
		}
	}
	payloadCols := []string{"dataset", "items", "format", "transport", "compression", "body_bytes", "coded_bytes", "wire_bytes"}
	header = append(header, payloadCols...)
	_ = cw.Write(header) // errors surface from Flush/Error below
	for _, g := range rep.Groups {
		for i, c := range g.Cells {
			row := []string{"cell", g.Name, c.Cell.ID, c.Cell.Label, itoa(c.Trials), itoa(c.FailedTrials),
				strconv.FormatInt(c.Requests, 10), strconv.FormatInt(c.Failed, 10)}
			for _, m := range Metrics {
				s, ok := c.Stat(m.Key)
				if ok {
					row = append(row, num(s.Center), num(s.Lo), num(s.Hi), num(s.Min), num(s.Max), itoa(s.N))
				} else {
					row = append(row, "", "", "", "", "", "0")
				}
				if vsMetrics[m.Key] {
					if d, ok := g.VsBaseline(i, m.Key); ok {
						row = append(row, num(d.Pct()), num(d.P))
					} else {
						row = append(row, "", "")
					}
				}
			}
			row = append(row, make([]string, len(payloadCols))...)
			_ = cw.Write(row)
		}
	}
	pad := len(header) - len(payloadCols)
	for _, p := range rep.Results.Payloads {
		row := make([]string, pad, len(header))
		row[0] = "payload"
		row = append(row, p.Dataset, itoa(p.N), p.Format, p.Transport, p.Compression,
			strconv.FormatInt(p.Body, 10), codedCell(p), strconv.FormatInt(p.Wire, 10))
		_ = cw.Write(row)
	}
	cw.Flush()
	if err := cw.Error(); err != nil {
		return fmt.Errorf("report: write csv: %w", err)
	}
	return nil
}

// codedCell is the body after content coding, empty when uncompressed or
// not known (gRPC compresses inside its own framing).
func codedCell(p Payload) string {
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
