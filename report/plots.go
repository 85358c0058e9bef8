package report

import (
	"fmt"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/wirebench/wirebench/results"
)

const (
	plotW     = 640.0
	plotRight = 24.0
	labelFont = 13.0 // px, as svg .label in html.tmpl
	valueFont = 12.0 // px, as svg .value
	minBarW   = 300.0
)

// barFrame is the horizontal layout of a bar chart: cell labels left of
// the bars, values right of them. Both margins are sized from the longest
// text (fixed margins clipped "json (encoding/json)" to "n (encoding/json)"),
// and the chart widens rather than squeeze the bars below minBarW.
type barFrame struct {
	w, left, right float64 // right is the x where the bar area ends
}

func newBarFrame(labels, values []string) barFrame {
	left := math.Max(60, maxTextWidth(labels, labelFont)+16)
	right := math.Max(40, maxTextWidth(values, valueFont)+16)
	w := math.Max(plotW, left+minBarW+right)
	return barFrame{w: w, left: left, right: w - right}
}

// barPlot is a horizontal bar per cell at its median of one metric (the
// group's answer metric: req/s, server CPU per request, p50 latency in a
// browser), with the 95% CI as an error bar; without an interval (too
// few trials) the bar shows the min–max range dashed instead, and says so.
func barPlot(g Group, key string) string {
	m, _ := MetricByKey(key)
	rowH, top, bottom := 38.0, 12.0, 36.0
	h := top + bottom + rowH*float64(len(g.Cells))
	hi := 0.0
	var labels, values []string
	for _, c := range g.Cells {
		labels = append(labels, c.Cell.Label)
		if st, ok := c.Stat(key); ok {
			hi = math.Max(hi, math.Max(st.Max, finiteOr(st.Hi, st.Max)))
			values = append(values, formatSummary(m.Unit, st))
		}
	}
	fr := newBarFrame(labels, values)
	plotLeft := fr.left
	unit := answerUnit(key)
	s := newSVG(fr.w, h, g.Name+": "+unit+", median with 95% CI, or the range of the trials when too few for one")
	ticks := niceTicks(hi, 5)
	if m.Unit == UnitBytes {
		ticks = byteTicks(hi, 5)
	}
	x := scale{0, ticks[len(ticks)-1], plotLeft, fr.right}
	axisY := top + rowH*float64(len(g.Cells))
	for _, t := range ticks {
		s.line(x.at(t), top, x.at(t), axisY, "grid")
		s.text(x.at(t), axisY+16, "middle", "tick", tickLabel(m.Unit, t))
	}
	axis := unit + " (lower is better)"
	switch {
	case key == headlineMetric:
		axis = "requests per second (higher is better)"
	case m.HigherIsBetter:
		axis = unit + " (higher is better)"
	}
	s.text((plotLeft+fr.right)/2, axisY+32, "middle", "axis", axis)
	for i, c := range g.Cells {
		y := top + rowH*float64(i)
		s.text(plotLeft-8, y+rowH/2+4, "end", "label", c.Cell.Label)
		st, ok := c.Stat(key)
		if !ok {
			continue
		}
		s.f(`<rect x="%.1f" y="%.1f" width="%.1f" height="%.1f" rx="3" fill="%s" fill-opacity="0.85"><title>%s: %s %s</title></rect>`,
			x.at(0), y+8, x.at(st.Center)-x.at(0), rowH-16, color(i), esc(c.Cell.Label), esc(formatSummary(m.Unit, st)), esc(unit))
		lo, hi, class := st.Lo, st.Hi, "err"
		if !st.HasCI() {
			lo, hi, class = st.Min, st.Max, "err range"
		}
		cy := y + rowH/2
		s.line(x.at(lo), cy, x.at(hi), cy, class)
		s.line(x.at(lo), cy-6, x.at(lo), cy+6, class)
		s.line(x.at(hi), cy-6, x.at(hi), cy+6, class)
		s.text(x.at(hi)+6, cy+4, "start", "value", formatSummary(m.Unit, st))
	}
	return s.String()
}

// barPlotTitle names a group's bar plot: "Throughput", "Server CPU per
// request".
func barPlotTitle(key string) string {
	if key == headlineMetric {
		return "Throughput"
	}
	u := answerUnit(key)
	return strings.ToUpper(u[:1]) + u[1:]
}

// tickLabel prints an axis value in its metric's unit.
func tickLabel(u Unit, v float64) string {
	if v == 0 {
		return "0"
	}
	switch u {
	case UnitDuration:
		return trimZeros(formatDuration(time.Duration(v)))
	case UnitBytes:
		return trimZeros(formatBytes(v))
	}
	return trimZeros(formatSI(v))
}

func finiteOr(v, alt float64) float64 {
	if math.IsInf(v, 0) || math.IsNaN(v) {
		return alt
	}
	return v
}

// latencyNines are the x positions of the percentile plot: x = nines, so
// 1 is p90, 2 is p99, 3 is p99.9, 4 is p99.99 (HdrHistogram's plot).
var latencyNines = []struct {
	x     float64
	label string
}{{0, "p0"}, {1, "p90"}, {2, "p99"}, {3, "p99.9"}, {4, "p99.99"}}

// latencyPlot draws each cell's latency by percentile from its merged
// histogram, HDR style: the x axis stretches the tail so that p99 and
// p99.9 get as much room as the first 90%. The latency axis is
// logarithmic when the curves span more than logSpan (a linear axis
// flattens a 2 ms server against another's 680 ms tail). Each curve has
// its colour, dash and marker, so eight stay apart in greyscale.
func latencyPlot(g Group) string {
	h, top, bottom := 300.0, 16.0, 60.0
	left := 78.0
	const steps = 160
	maxNines := 4.0
	type curve struct {
		pts [][2]float64
		i   int
	}
	var curves []curve
	lo, hi := math.Inf(1), 0.0
	for i, c := range g.Cells {
		if c.Latency == nil || c.Latency.Count() == 0 {
			continue
		}
		cv := curve{i: i}
		for k := 0; k <= steps; k++ {
			nines := maxNines * float64(k) / steps
			q := 1 - math.Pow(10, -nines)
			v := float64(c.Latency.Quantile(q))
			hi = math.Max(hi, v)
			if v > 0 {
				lo = math.Min(lo, v)
			}
			cv.pts = append(cv.pts, [2]float64{nines, v})
		}
		curves = append(curves, cv)
	}
	var labels []string
	var idx []int
	for _, cv := range curves {
		labels = append(labels, g.Cells[cv.i].Cell.Label)
		idx = append(idx, cv.i)
	}
	legendY := h - 8
	extra := legendLineH * float64(max(0, seriesLegendLines(left, plotW-plotRight, labels)-1))
	h, bottom = h+extra, bottom+extra // the legend grows downwards
	ax := newLatencyAxis(lo, hi)
	title := g.Name + ": latency by percentile, all trials merged"
	if ax.log {
		title += ", latency on a log scale"
	}
	s := newSVG(plotW, h, title)
	x := scale{0, maxNines, left, plotW - plotRight}
	y := scale{ax.d0, ax.d1, h - bottom, top}
	for _, t := range ax.ticks {
		s.line(left, y.at(ax.at(t)), plotW-plotRight, y.at(ax.at(t)), "grid")
		s.text(left-6, y.at(ax.at(t))+4, "end", "tick", trimZeros(formatDuration(time.Duration(t))))
	}
	ylabel := "latency (lower is better)"
	if ax.log {
		ylabel = "latency, log scale (lower is better)"
	}
	s.f(`<text x="14" y="%.1f" text-anchor="middle" class="axis" transform="rotate(-90 14 %.1f)">%s</text>`, (top+h-bottom)/2, (top+h-bottom)/2, esc(ylabel))
	for _, n := range latencyNines {
		s.line(x.at(n.x), top, x.at(n.x), h-bottom, "grid")
		s.text(x.at(n.x), h-bottom+16, "middle", "tick", n.label)
	}
	s.text((left+plotW-plotRight)/2, h-bottom+32, "middle", "axis", "percentile (log scale of 1 − q)")
	for _, cv := range curves {
		s.f(`<polyline fill="none" stroke="%s" stroke-width="2.2" stroke-linejoin="round"%s points="`, color(cv.i), dashAttr(cv.i))
		for _, p := range cv.pts {
			s.f("%.1f,%.1f ", x.at(p[0]), y.at(ax.at(p[1])))
		}
		s.f(`"><title>%s</title></polyline>`, esc(g.Cells[cv.i].Cell.Label))
	}
	for _, cv := range curves { // markers on top of every line, staggered so they do not stack
		for j := 0; j < int(maxNines); j++ {
			k := int(math.Round((float64(j) + 0.3 + 0.1*float64(cv.i%5)) / maxNines * steps))
			p := cv.pts[min(k, steps)]
			s.marker(cv.i, x.at(p[0]), y.at(ax.at(p[1])), g.Cells[cv.i].Cell.Label)
		}
	}
	s.seriesLegend(left, legendY, plotW-plotRight, labels, idx)
	return s.String()
}

// logSpan is the max/min ratio past which a latency axis is logarithmic.
const logSpan = 20

// latencyAxis maps latencies (ns) onto an axis, linear from 0 or
// logarithmic with ticks at 1, 2 and 5 × 10^k.
type latencyAxis struct {
	log    bool
	d0, d1 float64 // the axis' ends, in at's units
	ticks  []float64
}

func newLatencyAxis(lo, hi float64) latencyAxis {
	if hi <= 0 || math.IsInf(lo, 0) || hi/lo <= logSpan {
		ticks := niceTicks(hi, 5)
		return latencyAxis{d0: 0, d1: ticks[len(ticks)-1], ticks: ticks}
	}
	ticks := logTicks(lo, hi)
	return latencyAxis{log: true, d0: math.Log10(ticks[0]), d1: math.Log10(ticks[len(ticks)-1]), ticks: ticks}
}

// at is v's position on the axis.
func (a latencyAxis) at(v float64) float64 {
	if !a.log {
		return v
	}
	return math.Log10(math.Max(v, math.Pow(10, a.d0)))
}

// logTicks are the 1, 2, 5 × 10^k from the largest at or below lo to the
// smallest at or above hi; only the powers of ten (and the ends) when
// that would be more than ten.
func logTicks(lo, hi float64) []float64 {
	tick := func(k int) float64 { // …, 0.5, 1, 2, 5, 10, 20, … for k = …, -1, 0, 1, 2, 3, 4, …
		e := k / 3
		if k < 0 && k%3 != 0 {
			e--
		}
		return []float64{1, 2, 5}[k-3*e] * math.Pow(10, float64(e))
	}
	k := 3 * int(math.Floor(math.Log10(lo)))
	for tick(k+1) <= lo*(1+1e-9) {
		k++
	}
	var all []float64
	for ; ; k++ {
		all = append(all, tick(k))
		if tick(k) >= hi*(1-1e-9) {
			break
		}
	}
	if len(all) <= 10 {
		return all
	}
	out := []float64{all[0]}
	for _, v := range all[1 : len(all)-1] {
		if m := v / math.Pow(10, math.Round(math.Log10(v))); math.Abs(m-1) < 1e-9 {
			out = append(out, v)
		}
	}
	return append(out, all[len(all)-1])
}

// bytesPlot stacks, per cell, the bytes per request received and sent:
// the body (payload) and the framing around it (wire − body: headers,
// HTTP/2 and gRPC frames), because a format that saves body bytes can
// lose them again in framing.
func bytesPlot(g Group) string {
	rowH, top, bottom := 24.0, 12.0, 56.0
	n := 2 * len(g.Cells)
	h := top + bottom + rowH*float64(n) + 8*float64(len(g.Cells))
	type bar struct {
		label      string
		body, wire float64
		i          int
	}
	var bars []bar
	hi := 0.0
	for i, c := range g.Cells {
		for _, dir := range []string{"recv", "sent"} {
			b, okB := c.Stat(dir + "_body_per_req")
			w, okW := c.Stat(dir + "_wire_per_req")
			if !okB || !okW {
				continue
			}
			bars = append(bars, bar{c.Cell.Label + " " + dir, b.Center, w.Center, i})
			hi = math.Max(hi, math.Max(b.Center, w.Center))
		}
	}
	var labels, values []string
	for _, b := range bars {
		labels = append(labels, b.label)
		values = append(values, bytesValue(b.body, b.wire))
	}
	fr := newBarFrame(labels, values)
	plotLeft := fr.left
	s := newSVG(fr.w, h, g.Name+": bytes per request, body and framing")
	ticks := byteTicks(hi, 4)
	x := scale{0, ticks[len(ticks)-1], plotLeft, fr.right}
	axisY := h - bottom
	for _, t := range ticks {
		s.line(x.at(t), top, x.at(t), axisY, "grid")
		s.text(x.at(t), axisY+16, "middle", "tick", trimZeros(formatBytes(t)))
	}
	s.text((plotLeft+fr.right)/2, axisY+32, "middle", "axis", "bytes per request (lower is better)")
	y := top
	for k, b := range bars {
		if k > 0 && b.i != bars[k-1].i {
			y += 8
		}
		framing := math.Max(0, b.wire-b.body)
		s.text(plotLeft-8, y+rowH/2+4, "end", "label", b.label)
		s.f(`<rect x="%.1f" y="%.1f" width="%.1f" height="%.1f" fill="%s"><title>body %s</title></rect>`,
			x.at(0), y+3, x.at(b.body)-x.at(0), rowH-6, color(b.i), esc(formatBytes(b.body)))
		s.f(`<rect x="%.1f" y="%.1f" width="%.1f" height="%.1f" fill="%s" fill-opacity="0.35" class="framing"><title>framing %s</title></rect>`,
			x.at(b.body), y+3, x.at(b.body+framing)-x.at(b.body), rowH-6, color(b.i), esc(formatBytes(framing)))
		s.text(x.at(b.body+framing)+6, y+rowH/2+4, "start", "value", bytesValue(b.body, b.wire))
		y += rowH
	}
	s.f(`<rect x="%.1f" y="%.1f" width="12" height="12" fill="#555"/>`, plotLeft, h-18)
	s.text(plotLeft+16, h-8, "start", "legend", "body")
	s.f(`<rect x="%.1f" y="%.1f" width="12" height="12" fill="#555" fill-opacity="0.35"/>`, plotLeft+70, h-18)
	s.text(plotLeft+86, h-8, "start", "legend", "framing (wire − body)")
	return s.String()
}

// bytesValue is the label after a bytes bar: "2.55 KiB + 132.5 B".
func bytesValue(body, wire float64) string {
	return fmt.Sprintf("%s + %s", formatBytes(body), formatBytes(math.Max(0, wire-body)))
}

// rssPlot draws the server's resident memory over each trial, one thin
// line per trial in the cell's colour, so a leak or a trial unlike the
// others is visible at a glance.
func rssPlot(g Group) string {
	h, top, bottom, left := 280.0, 16.0, 60.0, 76.0
	var labels []string
	var idx []int
	for i, c := range g.Cells {
		if slices.ContainsFunc(c.RSS, func(tr []results.ProcSample) bool { return len(tr) > 0 }) {
			labels = append(labels, c.Cell.Label)
			idx = append(idx, i)
		}
	}
	legendY := h - 8
	extra := legendLineH * float64(max(0, seriesLegendLines(left, plotW-plotRight, labels)-1))
	h, bottom = h+extra, bottom+extra // the legend grows downwards
	s := newSVG(plotW, h, g.Name+": server RSS over time, every trial")
	var tmax, hi float64
	for _, c := range g.Cells {
		for _, tr := range c.RSS {
			for _, p := range tr {
				tmax = math.Max(tmax, p.T.Seconds())
				hi = math.Max(hi, float64(p.RSS))
			}
		}
	}
	xt := niceTicks(tmax, 6)
	yt := byteTicks(hi, 4)
	x := scale{0, xt[len(xt)-1], left, plotW - plotRight}
	y := scale{0, yt[len(yt)-1], h - bottom, top}
	for _, t := range yt {
		s.line(left, y.at(t), plotW-plotRight, y.at(t), "grid")
		s.text(left-6, y.at(t)+4, "end", "tick", trimZeros(formatBytes(t)))
	}
	for _, t := range xt {
		s.line(x.at(t), top, x.at(t), h-bottom, "grid")
		s.text(x.at(t), h-bottom+16, "middle", "tick", fmt.Sprintf("%gs", t))
	}
	s.text((left+plotW-plotRight)/2, h-bottom+32, "middle", "axis", "time since the measured run began")
	for i, c := range g.Cells {
		for k, tr := range c.RSS {
			if len(tr) == 0 {
				continue
			}
			s.f(`<polyline fill="none" stroke="%s" stroke-width="1.6" stroke-opacity="0.8"%s points="`, color(i), dashAttr(i))
			for _, p := range tr {
				s.f("%.1f,%.1f ", x.at(p.T.Seconds()), y.at(float64(p.RSS)))
			}
			s.f(`"><title>%s trial %d</title></polyline>`, esc(c.Cell.Label), k)
		}
	}
	if len(labels) == 0 {
		s.text(plotW/2, h/2, "middle", "axis", "no server samples")
	}
	s.seriesLegend(left, legendY, plotW-plotRight, labels, idx)
	return s.String()
}
