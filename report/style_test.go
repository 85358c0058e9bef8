package report

import (
	"fmt"
	"math"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/wirebench/wirebench/measure"
	"github.com/wirebench/wirebench/results"
)

// TestSeriesStylesDistinct: eight series differ in colour, dash and
// marker alike, so they stay apart in greyscale.
func TestSeriesStylesDistinct(t *testing.T) {
	seen := map[string]bool{}
	for i := range 8 {
		if seen["c"+palette[i]] || seen["d"+dashes[i]] || seen["m"+markerPath(i, 0, 0)] {
			t.Errorf("series %d repeats a colour, dash or marker of an earlier one", i)
		}
		seen["c"+palette[i]], seen["d"+dashes[i]], seen["m"+markerPath(i, 0, 0)] = true, true, true
	}
	if len(seen) != 24 {
		t.Fatalf("%d styles seen, want 24", len(seen))
	}
}

// latencyGroup is a group whose cells' latencies are around the given
// medians, with a tail of tail× the median.
func latencyGroup(medians []time.Duration, tail float64) Group {
	var g Group
	for i, m := range medians {
		h := measure.NewHistogram()
		for k := range 1000 {
			f := 0.8 + 0.4*float64(k)/1000
			if k%100 == 99 {
				f *= tail
			}
			h.Record(time.Duration(float64(m) * f))
		}
		g.Cells = append(g.Cells, CellSummary{Cell: results.Cell{Label: fmt.Sprintf("cell %d", i)}, Latency: h})
	}
	g.Name = "g"
	return g
}

// TestLatencyPlotEightLinesDistinct: the latency plot gives eight cells
// eight dash patterns, markers on every line and a legend with both.
func TestLatencyPlotEightLinesDistinct(t *testing.T) {
	g := latencyGroup([]time.Duration{1, 2, 3, 4, 5, 6, 7, 8}, 3)
	for i := range g.Cells {
		g.Cells[i].Latency = latencyGroup([]time.Duration{time.Duration(i+1) * time.Millisecond}, 3).Cells[0].Latency
	}
	svg := latencyPlot(g)
	lines := regexp.MustCompile(`<polyline[^>]*>`).FindAllString(svg, -1)
	if len(lines) != 8 {
		t.Fatalf("%d lines, want 8", len(lines))
	}
	var dashes []string
	for _, l := range lines {
		d := ""
		if m := regexp.MustCompile(`stroke-dasharray="([^"]*)"`).FindStringSubmatch(l); m != nil {
			d = m[1]
		}
		dashes = append(dashes, d)
	}
	if slices.Sort(dashes); len(slices.Compact(dashes)) != 8 {
		t.Errorf("dash patterns %q: want 8 different", dashes)
	}
	if n := strings.Count(svg, "<path "); n < 8*4+8 {
		t.Errorf("%d markers, want 4 per line and one per legend key", n)
	}
}

func TestLogTicks(t *testing.T) {
	ms := float64(time.Millisecond)
	tests := []struct {
		lo, hi float64
		want   []float64
	}{
		{2 * ms, 680 * ms, []float64{2 * ms, 5 * ms, 10 * ms, 20 * ms, 50 * ms, 100 * ms, 200 * ms, 500 * ms, 1000 * ms}},
		{1.5 * ms, 40 * ms, []float64{1 * ms, 2 * ms, 5 * ms, 10 * ms, 20 * ms, 50 * ms}},
		{30_000, 3e9, []float64{2e4, 1e5, 1e6, 1e7, 1e8, 1e9, 5e9}}, // 30µs..3s: powers of ten only, and the ends
		{0.3, 7, []float64{0.2, 0.5, 1, 2, 5, 10}},
	}
	for _, tt := range tests {
		got := logTicks(tt.lo, tt.hi)
		if len(got) != len(tt.want) {
			t.Errorf("logTicks(%g, %g) = %g, want %g", tt.lo, tt.hi, got, tt.want)
			continue
		}
		for i := range got {
			if math.Abs(got[i]/tt.want[i]-1) > 1e-9 {
				t.Errorf("logTicks(%g, %g) = %g, want %g", tt.lo, tt.hi, got, tt.want)
				break
			}
		}
	}
}

// TestLatencyAxisLogWhenDecades: a fast server beside another's 680 ms
// tail gets a log axis on which its median stands well clear of the
// bottom; close ranges stay linear from zero.
func TestLatencyAxisLogWhenDecades(t *testing.T) {
	if ax := newLatencyAxis(float64(time.Millisecond), float64(15*time.Millisecond)); ax.log || ax.d0 != 0 {
		t.Errorf("1–15 ms: %+v, want linear from 0", ax)
	}
	g := latencyGroup([]time.Duration{2 * time.Millisecond, 20 * time.Millisecond}, 34) // tail to 680 ms
	svg := latencyPlot(g)
	if !strings.Contains(svg, "latency, log scale") {
		t.Fatal("a 2 ms median beside a 680 ms tail: no log axis")
	}
	ax := newLatencyAxis(float64(1600*time.Microsecond), float64(816*time.Millisecond))
	y := scale{ax.d0, ax.d1, 0, 1}
	if f := y.at(ax.at(float64(2 * time.Millisecond))); f < 0.1 {
		t.Errorf("the fast median sits at %.2f of the axis height, want clear of the bottom", f)
	}
}
