package report_test

import (
	"bytes"
	"strings"
	"testing"

	"github.com/wirebench/wirebench/report"
	"github.com/wirebench/wirebench/report/reporttest"
	"github.com/wirebench/wirebench/results"
)

// A study cut short by a signal says so before anything else, and decides
// no comparison that involves a cell with missing trials, even where the
// trials that ran would be significant.
func TestInterruptedStudyDecidesNothingIncomplete(t *testing.T) {
	r := reporttest.Results(reporttest.Options{})
	decided := 0
	for _, g := range report.Build(r).Groups {
		for _, f := range g.Findings() {
			if f.Verdict == report.Better || f.Verdict == report.Worse {
				decided++
			}
		}
	}
	if decided == 0 {
		t.Fatal("the uninterrupted fixture decides nothing: the test below would prove nothing")
	}

	var ids []string
	for _, c := range r.Cells {
		ids = append(ids, c.ID)
	}
	// echo/http1 ran all its trials; every other cell missed some. The
	// echo group's comparison involves grpc, which is incomplete.
	r.Stop = &results.StudyStop{Interrupted: true, Signal: "SIGTERM", TrialsRun: 20, TrialsPlanned: 30,
		Complete: []string{"echo/http1"}}
	for _, id := range ids {
		if id != "echo/http1" {
			r.Stop.Incomplete = append(r.Stop.Incomplete, id)
		}
	}
	rep := report.Build(r)
	findings := 0
	for _, g := range rep.Groups {
		for _, f := range g.Findings() {
			findings++
			if f.Verdict != report.Undecided || !strings.Contains(f.Text, "not decided, the study was interrupted") {
				t.Errorf("finding of an interrupted study: verdict %d %q, want undecided, saying interrupted", f.Verdict, f.Text)
			}
		}
	}
	if findings == 0 {
		t.Fatal("no findings checked")
	}

	var md bytes.Buffer
	if err := report.WriteMarkdown(&md, rep); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(md.String(), "\n")
	want := "> **INTERRUPTED — 20 of 30 trials ran (stopped by SIGTERM): complete cells echo/http1; incomplete "
	if len(lines) < 3 || !strings.HasPrefix(lines[2], want) {
		t.Errorf("report.md does not open with the interrupted line:\n%s", strings.Join(lines[:min(5, len(lines))], "\n"))
	}
	answer := ""
	for _, l := range lines {
		if strings.HasPrefix(l, "**Answer:**") {
			answer = l
		}
	}
	if answer == "" || strings.Contains(answer, "worse:") || strings.Contains(answer, "better:") ||
		!strings.Contains(answer, "not decided (the study was interrupted)") {
		t.Errorf("answer line of an interrupted study: %q", answer)
	}
	// Tables mark no comparison significant: "? (p=0.005)", never a change.
	if strings.Contains(strings.ReplaceAll(md.String(), "? (p=", ""), "(p=0.0") {
		t.Errorf("report.md shows a significant p-value for an incomplete cell:\n%s", md.String())
	}

	var csv bytes.Buffer
	if err := report.WriteCSV(&csv, rep); err != nil {
		t.Fatal(err)
	}
	for _, v := range []string{",better", ",worse", ",same"} {
		if strings.Contains(csv.String(), v) {
			t.Errorf("report.csv has a %q verdict for an interrupted study:\n%s", v[1:], csv.String())
		}
	}
	var html bytes.Buffer
	if err := report.WriteHTML(&html, rep); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(html.String(), "INTERRUPTED — 20 of 30 trials ran") {
		t.Error("report.html does not say the study was interrupted")
	}
	// compare: six trials against the same six would be "~"; cut, "?".
	var ab bytes.Buffer
	if err := report.WriteAB(&ab, r, r); err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(ab.String(), "old: INTERRUPTED — 20 of 30 trials ran") || strings.Contains(ab.String(), "~ (p=") ||
		!strings.Contains(ab.String(), "? (p=") {
		t.Errorf("compare of an interrupted study:\n%s", ab.String())
	}
}
