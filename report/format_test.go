package report

import (
	"strings"
	"testing"

	"github.com/wirebench/wirebench/results/stats"
)

// TestFormatSummary: with an interval, benchstat's "± x%"; without one,
// the observed range in brackets, and never "∞".
func TestFormatSummary(t *testing.T) {
	tests := []struct {
		name string
		unit Unit
		xs   []float64
		want string
	}{
		{"none", UnitRate, nil, "—"},
		{"one trial", UnitRate, []float64{5501}, "5.501k"},
		{"two trials", UnitRate, []float64{3980, 7030}, "5.505k [3.98–7.03k]"},
		{"range crosses a unit", UnitDuration, []float64{961e3, 1005e3}, "983.0µs [961µs–1.005ms]"},
		{"bytes", UnitBytes, []float64{40.5, 40.9}, "40.7 B [40.5–40.9 B]"},
		{"equal as printed", UnitBytes, []float64{302.5, 302.49999999}, "302.5 B [all equal]"},
		{"with CI", UnitRate, []float64{90, 95, 100, 100, 105, 120}, "100.0 ± 20%"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := formatSummary(tt.unit, stats.Summarize(tt.xs))
			if got != tt.want {
				t.Errorf("got %q, want %q", got, tt.want)
			}
			if strings.Contains(got, "∞") {
				t.Errorf("%q prints ∞", got)
			}
		})
	}
}
