package report

import (
	"fmt"
	"math"

	"github.com/wirebench/wirebench/results"
)

// labPlot draws each format's bytes per message against its CPU per
// message (encode plus decode), both axes logarithmic, one series per
// format through its compressions (none, then each coding): the lower
// left is smaller and cheaper, and a format's line shows what each
// compression buys in bytes for what it costs in CPU.
func labPlot(p *results.PayloadLab) string {
	h, top, bottom, left := 340.0, 16.0, 60.0, 70.0
	right := plotW - plotRight
	var formats []string
	rows := map[string][]results.PayloadRow{}
	for _, r := range p.Rows {
		if _, ok := rows[r.Format]; !ok {
			formats = append(formats, r.Format)
		}
		rows[r.Format] = append(rows[r.Format], r)
	}
	idx := make([]int, len(formats))
	for i := range idx {
		idx[i] = i
	}
	legendY := h - 8
	extra := legendLineH * float64(max(0, seriesLegendLines(left, right, formats)-1))
	h, bottom = h+extra, bottom+extra
	sv := newSVG(plotW, h, "bytes per message against CPU per message (encode + decode), per format and compression, log-log")
	cpu := func(r results.PayloadRow) float64 { return r.Encode.Ns + r.Decode.Ns }
	xlo, xhi, ylo, yhi := math.Inf(1), 0.0, math.Inf(1), 0.0
	for _, r := range p.Rows {
		if c, b := cpu(r), r.Bytes.Median; c > 0 && b > 0 {
			xlo, xhi = math.Min(xlo, c), math.Max(xhi, c)
			ylo, yhi = math.Min(ylo, b), math.Max(yhi, b)
		}
	}
	if xhi == 0 {
		sv.text(plotW/2, h/2, "middle", "axis", "no CPU measured (run without --time 0)")
		return sv.String()
	}
	// Axes span the data to the nearest 1, 2 or 5 × 10^k (not whole
	// decades: sizes of one payload differ by tens of percent, and decades
	// would crowd them into a line).
	xt, yt := logTicks(xlo, xhi), logTicks(ylo, yhi)
	x := scale{math.Log10(xt[0]), math.Log10(xt[len(xt)-1]), left, right}
	y := scale{math.Log10(yt[0]), math.Log10(yt[len(yt)-1]), h - bottom, top}
	for _, t := range yt {
		sv.line(left, y.at(math.Log10(t)), right, y.at(math.Log10(t)), "grid")
		sv.text(left-6, y.at(math.Log10(t))+4, "end", "tick", trimZeros(formatBytes(t)))
	}
	for _, t := range xt {
		sv.line(x.at(math.Log10(t)), top, x.at(math.Log10(t)), h-bottom, "grid")
		sv.text(x.at(math.Log10(t)), h-bottom+16, "middle", "tick", trimZeros(formatNs(t)))
	}
	sv.text((left+right)/2, h-bottom+32, "middle", "axis", "encode + decode per message (log scale; lower left is smaller and cheaper)")
	var placed [][4]float64
	for i, f := range formats {
		type point struct {
			x, y float64
			r    results.PayloadRow
		}
		var pts []point
		for _, r := range rows[f] {
			if c, b := cpu(r), r.Bytes.Median; c > 0 && b > 0 {
				pts = append(pts, point{x.at(math.Log10(c)), y.at(math.Log10(b)), r})
			}
		}
		sv.f(`<polyline fill="none" stroke="%s" stroke-width="1.6" stroke-linejoin="round"%s points="`, color(i), dashAttr(i))
		for _, pt := range pts {
			sv.f("%.1f,%.1f ", pt.x, pt.y)
		}
		sv.f(`"><title>%s</title></polyline>`, esc(f))
		for _, pt := range pts {
			name := f
			if pt.r.Compression != "" {
				name += " + " + pt.r.Compression
			}
			sv.marker(i, pt.x, pt.y, fmt.Sprintf("%s: %s per message, %s encode + %s decode", name,
				formatBytes(pt.r.Bytes.Median), formatNs(pt.r.Encode.Ns), formatNs(pt.r.Decode.Ns)))
			lbl := compressionName(pt.r.Compression)
			box := [4]float64{pt.x + 5, pt.y - 15, pt.x + 9 + 6*float64(len(lbl)), pt.y - 3}
			if !overlaps(placed, box) { // a crowded label is left to the marker's tooltip
				placed = append(placed, box)
				sv.text(pt.x+6, pt.y-6, "start", "tick", lbl)
			}
		}
	}
	sv.seriesLegend(left, legendY, right, formats, idx)
	return sv.String()
}

func overlaps(boxes [][4]float64, b [4]float64) bool {
	for _, o := range boxes {
		if b[0] < o[2] && o[0] < b[2] && b[1] < o[3] && o[1] < b[3] {
			return true
		}
	}
	return false
}
