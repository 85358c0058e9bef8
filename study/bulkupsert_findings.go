package study

import (
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/wirebench/wirebench/results/stats"
)

// The bulk-upsert report's findings and one-line answer, with the same
// statistics and wording rules as every other report (results/stats,
// report/headline.go): a ratio with its p-value when the Mann-Whitney
// test finds a difference, "~" when enough trials found none, and
// "cannot decide" with the observed ratio when too few trials were run
// for the test to decide at all.

// bulkSet is a run's cells summarized, with each format's streaming and
// buffered cells paired.
type bulkSet struct {
	stats            map[*BulkCell]cellStats
	ref              cellStats // sqlite3 .import
	formats          []string  // formats with both a streaming and a buffered cell, in cell order
	stream, buffered map[string]*BulkCell
}

func newBulkSet(r *BulkResults) bulkSet {
	bs := bulkSet{stats: map[*BulkCell]cellStats{}, stream: map[string]*BulkCell{}, buffered: map[string]*BulkCell{}}
	for _, c := range r.Cells {
		s := statsOf(c)
		bs.stats[c] = s
		switch c.Mode {
		case ModeImport:
			bs.ref = s
		case ModeStream:
			bs.stream[c.Format] = c
		case ModeBuffered:
			bs.buffered[c.Format] = c
		}
	}
	for _, c := range r.Cells {
		if c.Mode == ModeStream && bs.buffered[c.Format] != nil && !slices.Contains(bs.formats, c.Format) {
			bs.formats = append(bs.formats, c.Format)
		}
	}
	return bs
}

// bulkMeasure is one thing a finding compares.
type bulkMeasure struct {
	name string
	vals func(cellStats) []float64
}

var bulkMeasures = []bulkMeasure{
	{"peak RSS", func(s cellStats) []float64 { return s.peaks }},
	{"wall time", func(s cellStats) []float64 { return s.walls }},
	{"server CPU", func(s cellStats) []float64 { return s.cpus }},
}

// ratioText is the new/old ratio of medians with its range given both
// samples' intervals (or trial ranges): "0.43× [0.38…0.50]".
func ratioText(d stats.Delta) string {
	if d.Old.Center == 0 || math.IsNaN(d.Pct()) {
		return "–"
	}
	s := fmt.Sprintf("%.2f×", d.New.Center/d.Old.Center)
	if lo, hi := d.PctRange(); !math.IsNaN(lo) && !math.IsNaN(hi) {
		s += fmt.Sprintf(" [%.2f…%.2f]", 1+lo/100, 1+hi/100)
	}
	return s
}

// undecidable reports whether no delta in ds could be significant.
func undecidable(ds []stats.Delta) bool {
	return !slices.ContainsFunc(ds, func(d stats.Delta) bool { return d.Decidable() })
}

// deltaText words one comparison: "0.43× [0.42…0.44] (p=0.008)", "~ (p=0.420)"
// or, too few trials to decide, "? 0.43× [0.42…0.44]".
func deltaText(d stats.Delta) string {
	switch {
	case !d.Significant() && !d.Decidable():
		return "? " + ratioText(d)
	case !d.Significant():
		return fmt.Sprintf("~ (p=%.3f)", d.P)
	}
	return fmt.Sprintf("%s (p=%.3f)", ratioText(d), d.P)
}

func trialsText(d stats.Delta) string {
	if d.Old.N == d.New.N {
		return fmt.Sprintf("%d trials", d.Old.N)
	}
	return fmt.Sprintf("%d+%d trials", d.Old.N, d.New.N)
}

// findings compare, per format, streaming against buffered on peak RSS,
// wall time and server CPU.
func (bs bulkSet) findings() []string {
	var out []string
	for _, f := range bs.formats {
		st, bu := bs.stats[bs.stream[f]], bs.stats[bs.buffered[f]]
		if st.ok == 0 || bu.ok == 0 {
			out = append(out, fmt.Sprintf("%s, streaming against buffered: nothing to compare (a cell had no successful trial)", f))
			continue
		}
		var ds []stats.Delta
		for _, m := range bulkMeasures {
			ds = append(ds, stats.Compare(m.vals(bu), m.vals(st)))
		}
		var parts []string
		if undecidable(ds) {
			for k, m := range bulkMeasures {
				parts = append(parts, m.name+" "+ratioText(ds[k]))
			}
			out = append(out, fmt.Sprintf("%s, streaming against buffered: cannot decide with %s (need %d+): %s",
				f, trialsText(ds[0]), stats.MinUTestSamples(stats.Alpha), strings.Join(parts, ", ")))
			continue
		}
		for k, m := range bulkMeasures {
			parts = append(parts, m.name+" "+deltaText(ds[k]))
		}
		out = append(out, fmt.Sprintf("%s, streaming against buffered: %s (%s)", f, strings.Join(parts, ", "), trialsText(ds[0])))
	}
	if bs.ref.ok > 0 {
		var parts []string
		var ds []stats.Delta
		for _, f := range bs.formats {
			if st := bs.stats[bs.stream[f]]; st.ok > 0 {
				d := stats.Compare(bs.ref.rates, st.rates)
				ds = append(ds, d)
				parts = append(parts, f+" "+ratioText(d))
			}
		}
		if len(ds) > 0 {
			what := "significantly below it in all"
			switch n := countSignificant(ds); {
			case undecidable(ds):
				what = fmt.Sprintf("cannot decide with %s", trialsText(ds[0]))
			case n < len(ds):
				what = fmt.Sprintf("significantly different in %d of %d", n, len(ds))
			}
			out = append(out, fmt.Sprintf("streaming rows/s against sqlite3 .import's (%s): %s", what, strings.Join(parts, ", ")))
		}
	}
	return out
}

func countSignificant(ds []stats.Delta) int {
	n := 0
	for _, d := range ds {
		if d.Significant() {
			n++
		}
	}
	return n
}

// answer is the question's answer in one line: what streaming costs
// against buffering across the formats, and how far it is from .import.
func (bs bulkSet) answer() string {
	var parts []string
	var undecided bool
	trials := ""
	for _, m := range bulkMeasures {
		var ratios []float64
		var ds []stats.Delta
		for _, f := range bs.formats {
			st, bu := bs.stats[bs.stream[f]], bs.stats[bs.buffered[f]]
			if st.ok == 0 || bu.ok == 0 {
				continue
			}
			d := stats.Compare(m.vals(bu), m.vals(st))
			if d.Old.Center > 0 {
				ratios = append(ratios, d.New.Center/d.Old.Center)
				ds = append(ds, d)
			}
		}
		if len(ds) == 0 {
			continue
		}
		p := fmt.Sprintf("%s× buffered's %s", ratioSpan(ratios), m.name)
		if undecidable(ds) {
			undecided, trials = true, trialsText(ds[0])
		} else {
			p += fmt.Sprintf(" (significant in %d of %d formats)", countSignificant(ds), len(ds))
		}
		parts = append(parts, p)
	}
	if len(parts) == 0 {
		return ""
	}
	line := "streaming takes " + strings.Join(parts, ", ")
	var imp []float64
	for _, f := range bs.formats {
		if st := bs.stats[bs.stream[f]]; st.ok > 0 && bs.ref.ok > 0 && bs.ref.rate.Center > 0 {
			imp = append(imp, st.rate.Center/bs.ref.rate.Center)
		}
	}
	if len(imp) > 0 {
		line += fmt.Sprintf(", at %s× sqlite3 .import's rows/s", ratioSpan(imp))
	}
	line += fmt.Sprintf(", across %d formats.", len(bs.formats))
	if undecided {
		return fmt.Sprintf("Cannot tell with %s per cell (need %d+); observed: %s", trials, stats.MinUTestSamples(stats.Alpha), line)
	}
	return strings.ToUpper(line[:1]) + line[1:]
}

// ratioSpan is "0.43–0.51" (or one value): the ratios' range across formats.
func ratioSpan(rs []float64) string {
	lo, hi := slices.Min(rs), slices.Max(rs)
	if fmt.Sprintf("%.2f", lo) == fmt.Sprintf("%.2f", hi) {
		return fmt.Sprintf("%.2f", lo)
	}
	return fmt.Sprintf("%.2f–%.2f", lo, hi)
}
