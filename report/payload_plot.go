package report

import (
	"fmt"
	"math"
	"slices"
)

// payloadPlot draws, for one dataset, each format's body size against the
// number of items, both axes logarithmic: sizes span three or more orders
// of magnitude from 1 to 1000 items, and on log-log axes a format's fixed
// overhead shows at the left while its per-item cost sets the slope.
func payloadPlot(s *payloadSet) string {
	h, top, bottom, left := 300.0, 16.0, 60.0, 70.0
	right := plotW - plotRight
	var labels []string
	var idx []int
	for i, f := range s.Formats {
		labels = append(labels, f)
		idx = append(idx, i)
	}
	legendY := h - 8
	extra := legendLineH * float64(max(0, seriesLegendLines(left, right, labels)-1))
	h, bottom = h+extra, bottom+extra
	sv := newSVG(plotW, h, s.Dataset+": body bytes per format against items in the list, log-log")

	lo, hi := math.Inf(1), 0.0
	for _, f := range s.Formats {
		for _, n := range s.Ns {
			if b, ok := s.Body(f, n); ok && b > 0 {
				lo, hi = math.Min(lo, float64(b)), math.Max(hi, float64(b))
			}
		}
	}
	if hi == 0 || len(s.Ns) == 0 {
		sv.text(plotW/2, h/2, "middle", "axis", "no sizes")
		return sv.String()
	}
	nLo, nHi := float64(max(1, s.Ns[0])), float64(max(1, s.Ns[len(s.Ns)-1]))
	xd0, xd1 := math.Floor(math.Log10(nLo)), math.Max(math.Ceil(math.Log10(nHi)), math.Floor(math.Log10(nLo))+1)
	yd0, yd1 := math.Floor(math.Log10(lo)), math.Max(math.Ceil(math.Log10(hi)), math.Floor(math.Log10(lo))+1)
	x := scale{xd0, xd1, left, right}
	y := scale{yd0, yd1, h - bottom, top}
	for d := yd0; d <= yd1; d++ {
		sv.line(left, y.at(d), right, y.at(d), "grid")
		sv.text(left-6, y.at(d)+4, "end", "tick", decimalBytes(math.Pow(10, d)))
	}
	for d := xd0; d <= xd1; d++ {
		sv.line(x.at(d), top, x.at(d), h-bottom, "grid")
		sv.text(x.at(d), h-bottom+16, "middle", "tick", trimZeros(formatSI(math.Pow(10, d))))
	}
	sv.text((left+right)/2, h-bottom+32, "middle", "axis", "items in the list (log scale; lower lines are smaller)")
	for i, f := range s.Formats {
		type point struct {
			x, y float64
			n    int
			b    int64
		}
		var pts []point
		for _, n := range s.Ns {
			if b, ok := s.Body(f, n); ok && b > 0 && n > 0 {
				pts = append(pts, point{x.at(math.Log10(float64(n))), y.at(math.Log10(float64(b))), n, b})
			}
		}
		sv.f(`<polyline fill="none" stroke="%s" stroke-width="2.2" stroke-linejoin="round"%s points="`, color(i), dashAttr(i))
		for _, p := range pts {
			sv.f("%.1f,%.1f ", p.x, p.y)
		}
		sv.f(`"><title>%s</title></polyline>`, esc(f))
		for _, p := range pts {
			sv.marker(i, p.x, p.y, fmt.Sprintf("%s, %d items: %s B", f, p.n, formatInt(p.b)))
		}
	}
	sv.seriesLegend(left, legendY, right, labels, idx)
	return sv.String()
}

// decimalBytes labels a power-of-ten byte tick: 100 B, 1 kB, 10 kB, 1 MB
// (decimal units, as the ticks are powers of ten).
func decimalBytes(v float64) string {
	switch {
	case v >= 1e6:
		return trimZeros(sig4(v/1e6)) + " MB"
	case v >= 1e3:
		return trimZeros(sig4(v/1e3)) + " kB"
	}
	return fmt.Sprintf("%.0f B", v)
}

// payloadBarN picks the item count of the bar chart: 100 (a typical page)
// when measured, else the largest.
func payloadBarN(s *payloadSet) int {
	if slices.Contains(s.Ns, 100) || len(s.Ns) == 0 {
		return 100
	}
	return s.Ns[len(s.Ns)-1]
}

// payloadBars shows, at one item count, each format's body next to the
// same body after each content coding: compression narrows the gaps
// between formats that the uncompressed sizes suggest, and a reader
// choosing a format should see both.
func payloadBars(s *payloadSet, n int) string {
	rowH, gap, top, bottom := 16.0, 10.0, 12.0, 56.0
	kinds := append([]string{""}, s.Codings...)
	var labels, values []string
	hi := 0.0
	size := func(f, c string) (int64, bool) {
		if c == "" {
			return s.Body(f, n)
		}
		v, ok := s.coded[payloadFNC{payloadFN{f, n}, c}]
		return v, ok && v > 0
	}
	for _, f := range s.Formats {
		labels = append(labels, f)
		for _, c := range kinds {
			if v, ok := size(f, c); ok {
				hi = math.Max(hi, float64(v))
				values = append(values, formatInt(v)+" B "+c)
			}
		}
	}
	fr := newBarFrame(labels, values)
	blockH := rowH*float64(len(kinds)) + gap
	h := top + bottom + blockH*float64(len(s.Formats))
	sv := newSVG(fr.w, h, fmt.Sprintf("%s: body bytes at %d items, uncompressed and content-coded", s.Dataset, n))
	ticks := byteTicks(hi, 4)
	x := scale{0, ticks[len(ticks)-1], fr.left, fr.right}
	axisY := h - bottom
	for _, t := range ticks {
		sv.line(x.at(t), top, x.at(t), axisY, "grid")
		sv.text(x.at(t), axisY+16, "middle", "tick", trimZeros(formatBytes(t)))
	}
	sv.text((fr.left+fr.right)/2, axisY+32, "middle", "axis", fmt.Sprintf("body bytes of a %d-item list (lower is better)", n))
	for i, f := range s.Formats {
		y := top + blockH*float64(i)
		sv.text(fr.left-8, y+blockH/2, "end", "label", f)
		for k, c := range kinds {
			v, ok := size(f, c)
			if !ok {
				continue
			}
			by := y + rowH*float64(k)
			opacity := 1 - 0.3*float64(k)
			sv.f(`<rect x="%.1f" y="%.1f" width="%.1f" height="%.1f" fill="%s" fill-opacity="%.2f"><title>%s %s: %s B</title></rect>`,
				x.at(0), by+1, x.at(float64(v))-x.at(0), rowH-2, color(i), opacity, esc(f), esc(compressionName(c)), formatInt(v))
			label := formatInt(v) + " B"
			if c != "" {
				label += " " + c
			}
			sv.text(x.at(float64(v))+5, by+rowH-4, "start", "value", label)
		}
	}
	var keys, colors []string
	for k, c := range kinds {
		keys = append(keys, map[bool]string{true: "uncompressed", false: c}[c == ""])
		colors = append(colors, fmt.Sprintf("rgba(85,85,85,%.2f)", 1-0.3*float64(k)))
	}
	sv.legend(fr.left, h-8, fr.right, keys, colors)
	return sv.String()
}
