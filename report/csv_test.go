package report_test

import (
	"bytes"
	"encoding/csv"
	"strconv"
	"strings"
	"testing"

	"github.com/wirebench/wirebench/report"
	"github.com/wirebench/wirebench/report/reporttest"
)

// TestCSVFormulaInjection: cell and group names are anyone's text (study
// files, load targets); a CSV cell a spreadsheet would run as a formula
// gets a leading quote, numbers (negative changes) stay numbers.
func TestCSVFormulaInjection(t *testing.T) {
	r := reporttest.Results(reporttest.Options{Trials: 2})
	evil := []string{"=cmd|' /C calc'!A0", "+SUM(1,2)", "-2+3", "@SUM(A1)", "\tTAB", "\rCR"}
	groups := map[string]string{}
	for i := range r.Cells {
		r.Cells[i].Label = evil[i%len(evil)]
		if _, ok := groups[r.Cells[i].Group]; !ok {
			groups[r.Cells[i].Group] = evil[(len(groups)+1)%len(evil)] + " group"
		}
		r.Cells[i].Group = groups[r.Cells[i].Group]
	}
	var buf bytes.Buffer
	if err := report.WriteCSV(&buf, report.Build(r)); err != nil {
		t.Fatal(err)
	}
	golden(t, "injection.csv.golden", buf.Bytes())
	rows, err := csv.NewReader(bytes.NewReader(buf.Bytes())).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	escaped, negatives := 0, 0
	for _, row := range rows {
		for _, c := range row {
			if c == "" || !strings.ContainsRune("=+-@\t\r", rune(c[0])) {
				escaped += strings.Count(c[:min(1, len(c))], "'")
				continue
			}
			if _, err := strconv.ParseFloat(c, 64); err != nil {
				t.Errorf("cell %q would run as a formula", c)
			}
			negatives++
		}
	}
	if escaped < len(r.Cells) {
		t.Errorf("%d cells escaped, want at least one per cell (%d)", escaped, len(r.Cells))
	}
	if negatives == 0 {
		t.Log("no negative numbers in this report (the exemption is untested here)")
	}
}
