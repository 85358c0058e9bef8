package main

import (
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/wirebench/wirebench/results/stats"
)

// readme is the project's README.md, which this package's tests hold to
// what the commands do.
func readme(t *testing.T) string {
	t.Helper()
	b, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestREADMESymbolsMatchReport: the symbols the README quotes for a
// comparison are the ones the report prints — "?" for cells too few trials
// could decide (a --quick run's 2), "~" for enough trials and no
// significant difference.
func TestREADMESymbolsMatchReport(t *testing.T) {
	undecided := stats.Compare([]float64{100, 110}, []float64{105, 115}).FormatDelta()
	same := stats.Compare([]float64{100, 110, 104, 98, 107, 102}, []float64{103, 99, 108, 101, 106, 100}).FormatDelta()
	if undecided == same {
		t.Fatalf("the report prints %q for both", same)
	}
	text := strings.Join(strings.Fields(readme(t)), " ")
	quick := regexp.MustCompile(`With 2 trials[^"]*"([^"]+)"`).FindStringSubmatch(text)
	if quick == nil {
		t.Fatal(`README: no sentence "With 2 trials … "symbol"" saying what a --quick run's comparison prints`)
	}
	if quick[1] != undecided {
		t.Errorf("README says a 2-trial comparison shows %q; the report prints %q", quick[1], undecided)
	}
	quoted := regexp.MustCompile(`"([?~])" \(([^)]*)\)`).FindAllStringSubmatch(text, -1)
	if len(quoted) == 0 {
		t.Fatal(`README: no symbol quoted with its meaning ("?" (…))`)
	}
	for _, q := range quoted {
		want := map[string]string{undecided: "too few trials", same: "no significant difference"}[q[1]]
		if want == "" || !strings.Contains(q[2], want) {
			t.Errorf("README: %q means %q; the report prints %q for too few trials and %q for no significant difference",
				q[1], q[2], undecided, same)
		}
	}
}
