package report

import (
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"

	"github.com/wirebench/wirebench/results"
	"github.com/wirebench/wirebench/results/stats"
)

// Tracker formats: a report's figures for the tools teams track a series
// of benchmark runs in. Each cell of the report is one benchmark, named
// "<study>/<cell id>" ("formats/crud/toon"), which stays the same from run
// to run; a single run's (a load or capacity file) is "<study>/<file
// name>" ("load/h2" for h2.json), so that runs written to different files
// are different benchmarks and a file written again each night is the same
// one (its target's port changes, its name does not). Each metric of the
// catalogue (results.Metrics) the cell has is one measure, by its short
// name (p99, rps, cpu_per_req), valued at the median over the cell's
// trials.
const (
	// FormatBMF is Bencher Metric Format (bencher.dev/docs/reference/
	// bencher-metric-format): {benchmark: {measure: {value, lower_value,
	// upper_value}}}, values in the metric's base unit (latency in ns,
	// Bencher's own latency unit; rates per second; bytes). The bounds are
	// the median's confidence interval, given only where the cell has
	// enough trials for one.
	FormatBMF = "bmf"
	// FormatSmaller and FormatBigger are github-action-benchmark's custom
	// tools of the same names (tool: customSmallerIsBetter in the
	// action): an array of {name, unit, value, range, extra}, one entry
	// per benchmark and measure, named "<benchmark> <measure>". The
	// action takes one direction per file, so each holds the metrics of
	// its direction only: latencies and costs, or rates and capacity.
	// Latencies are in ms there, the unit its charts print.
	FormatSmaller = "customSmallerIsBetter"
	FormatBigger  = "customBiggerIsBetter"
	// FormatAction is github-action-benchmark's format by the tool's own
	// name: FormatSmaller, the direction of latencies and costs (rates and
	// capacity need a second file, FormatBigger).
	FormatAction = "github-action-benchmark"
)

// ErrTrack marks results that cannot be written for a tracker together.
var ErrTrack = errors.New("report: cannot export")

// TrackFormats are the tracker formats WriteTrack writes.
var TrackFormats = []string{FormatBMF, FormatAction, FormatSmaller, FormatBigger}

// WriteTrack writes the reports' figures together in a tracker format
// (TrackFormats): one file for a CI step however many results it ran. Two
// reports that name the same benchmark and measure are refused rather
// than one silently overwriting the other.
func WriteTrack(w io.Writer, format string, reps ...*Report) error {
	var pts []trackPoint
	seen := map[string]bool{}
	for _, rep := range reps {
		for _, p := range trackPoints(rep) {
			key := p.bench + "\x00" + p.metric.ShortName()
			if seen[key] {
				return fmt.Errorf("%w: two results give benchmark %q (measure %s): a single run is named by its file, so give the files different names", ErrTrack, p.bench, p.metric.ShortName())
			}
			seen[key] = true
			pts = append(pts, p)
		}
	}
	switch format {
	case FormatBMF:
		return writeBMF(w, pts)
	case FormatSmaller, FormatAction:
		return writeAction(w, pts, false)
	case FormatBigger:
		return writeAction(w, pts, true)
	}
	return fmt.Errorf("%w: unknown format %q (want %s)", ErrTrack, format, strings.Join(TrackFormats, ", "))
}

// trackPoint is one measure of one benchmark.
type trackPoint struct {
	bench  string
	metric results.Metric
	value  float64
	lo, hi float64 // NaN without an interval
	n      int
}

// trackPoints are rep's benchmarks and measures, in report order.
func trackPoints(rep *Report) []trackPoint {
	study := "load"
	if r := rep.Results; r != nil && r.Study != "" {
		study = r.Study
	}
	var out []trackPoint
	for _, g := range rep.Groups {
		for _, c := range g.Cells {
			name := c.Cell.ID
			if rep.Results.SingleRun && c.Cell.Label != "" {
				name = c.Cell.Label // the file's name (results.ReadFile)
			}
			for _, m := range Metrics {
				s, ok := c.Stat(m.Key)
				if !ok || s.N == 0 || math.IsNaN(s.Center) || math.IsInf(s.Center, 0) {
					continue
				}
				p := trackPoint{bench: study + "/" + name, metric: m, value: s.Center, lo: math.NaN(), hi: math.NaN(), n: s.N}
				if s.HasCI() {
					p.lo, p.hi = s.Lo, s.Hi
				}
				out = append(out, p)
			}
		}
	}
	return out
}

// WriteBMF writes rep in Bencher Metric Format.
func WriteBMF(w io.Writer, rep *Report) error { return writeBMF(w, trackPoints(rep)) }

func writeBMF(w io.Writer, pts []trackPoint) error {
	type metric struct {
		Value float64  `json:"value"`
		Lower *float64 `json:"lower_value,omitempty"`
		Upper *float64 `json:"upper_value,omitempty"`
	}
	out := map[string]map[string]metric{}
	for _, p := range pts {
		m := metric{Value: p.value}
		if !math.IsNaN(p.lo) {
			m.Lower, m.Upper = &p.lo, &p.hi
		}
		if out[p.bench] == nil {
			out[p.bench] = map[string]metric{}
		}
		out[p.bench][p.metric.ShortName()] = m
	}
	if err := results.EncodeJSON(w, out, "  "); err != nil {
		return fmt.Errorf("report: write BMF: %w", err)
	}
	return nil
}

// WriteSmallerIsBetter and WriteBiggerIsBetter write rep's metrics of
// one direction for github-action-benchmark (FormatSmaller, FormatBigger).
func WriteSmallerIsBetter(w io.Writer, rep *Report) error {
	return writeAction(w, trackPoints(rep), false)
}

// WriteBiggerIsBetter: see WriteSmallerIsBetter.
func WriteBiggerIsBetter(w io.Writer, rep *Report) error {
	return writeAction(w, trackPoints(rep), true)
}

func writeAction(w io.Writer, pts []trackPoint, bigger bool) error {
	type bench struct {
		Name  string  `json:"name"`
		Unit  string  `json:"unit"`
		Value float64 `json:"value"`
		Range string  `json:"range,omitempty"`
		Extra string  `json:"extra,omitempty"`
	}
	out := []bench{} // never null: the action maps over the array
	for _, p := range pts {
		if p.metric.HigherIsBetter != bigger {
			continue
		}
		unit, scale := actionUnit(p.metric.Unit)
		b := bench{Name: p.bench + " " + p.metric.ShortName(), Unit: unit, Value: p.value / scale,
			Extra: p.metric.Desc + "; median of " + strconv.Itoa(p.n) + " trial(s)"}
		if p.n == 1 {
			b.Extra = p.metric.Desc + "; one run"
		}
		if !math.IsNaN(p.lo) {
			b.Range = "± " + strconv.FormatFloat(math.Max(p.value-p.lo, p.hi-p.value)/scale, 'g', 4, 64)
			b.Extra += fmt.Sprintf("; %v%% CI [%s, %s]", stats.Confidence*100, p.metric.Unit.Format(p.lo), p.metric.Unit.Format(p.hi))
		}
		out = append(out, b)
	}
	if err := results.EncodeJSON(w, out, "  "); err != nil {
		return fmt.Errorf("report: write %s: %w", map[bool]string{false: FormatSmaller, true: FormatBigger}[bigger], err)
	}
	return nil
}

// actionUnit is the unit a metric's values are written in for
// github-action-benchmark, and the divisor from the metric's base unit.
func actionUnit(u results.Unit) (string, float64) {
	switch u {
	case results.UnitDuration:
		return "ms", 1e6
	case results.UnitRate:
		return "ops/s", 1
	case results.UnitBytes:
		return "bytes", 1
	}
	return "count", 1
}
