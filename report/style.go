package report

import (
	"fmt"
	"math"
)

// Series styles. Colour alone does not keep eight lines apart — not for a
// reader with a colour-vision deficiency, not on a greyscale print, and
// not even in full colour where Okabe–Ito's orange, vermillion and yellow
// meet — so the i-th series also has its own dash pattern and marker
// shape, and legends show all three.

// dashes go with palette: solid first, then patterns that differ in
// rhythm, not only in length.
var dashes = []string{"", "9 4", "2 3", "10 3 2 3", "5 5", "14 3 3 3 3 3", "1 5", "18 5"}

// dashAttr is the stroke-dasharray attribute of series i ("" when solid).
func dashAttr(i int) string {
	if d := dashes[i%len(dashes)]; d != "" {
		return fmt.Sprintf(` stroke-dasharray="%s"`, d)
	}
	return ""
}

// markerPath is the SVG path of series i's marker centred on (x, y):
// circle, square, triangle, diamond, triangle down, plus, cross, star.
func markerPath(i int, x, y float64) string {
	const r = 4.5
	switch i % 8 {
	case 0:
		return fmt.Sprintf("M%.1f,%.1f a%.1f,%.1f 0 1,0 %.1f,0 a%.1f,%.1f 0 1,0 %.1f,0 Z", x-r, y, r, r, 2*r, r, r, -2*r)
	case 1:
		return fmt.Sprintf("M%.1f,%.1f h%.1f v%.1f h%.1f Z", x-r*0.85, y-r*0.85, 1.7*r, 1.7*r, -1.7*r)
	case 2:
		return fmt.Sprintf("M%.1f,%.1f L%.1f,%.1f L%.1f,%.1f Z", x, y-r*1.1, x+r, y+r*0.75, x-r, y+r*0.75)
	case 3:
		return fmt.Sprintf("M%.1f,%.1f L%.1f,%.1f L%.1f,%.1f L%.1f,%.1f Z", x, y-r*1.2, x+r, y, x, y+r*1.2, x-r, y)
	case 4:
		return fmt.Sprintf("M%.1f,%.1f L%.1f,%.1f L%.1f,%.1f Z", x, y+r*1.1, x+r, y-r*0.75, x-r, y-r*0.75)
	case 5:
		w := r * 0.45
		return fmt.Sprintf("M%.1f,%.1f h%.1f v%.1f h%.1f v%.1f h%.1f v%.1f h%.1f v%.1f h%.1f v%.1f h%.1f Z",
			x-w, y-r, 2*w, r-w, r-w, 2*w, w-r, r-w, -2*w, w-r, w-r, -2*w, r-w)
	case 6:
		d := r * 0.8
		return fmt.Sprintf("M%.1f,%.1f L%.1f,%.1f M%.1f,%.1f L%.1f,%.1f", x-d, y-d, x+d, y+d, x-d, y+d, x+d, y-d)
	}
	var p string
	for k := range 10 { // a five-pointed star
		rad := r * 1.2
		if k%2 == 1 {
			rad = r * 0.5
		}
		a := math.Pi/2 + float64(k)*math.Pi/5
		cmd := "L"
		if k == 0 {
			cmd = "M"
		}
		p += fmt.Sprintf("%s%.1f,%.1f ", cmd, x+rad*math.Cos(a), y-rad*math.Sin(a))
	}
	return p + "Z"
}

// marker draws series i's marker at (x, y), outlined so that the
// lightest colour (yellow) still shows on white.
func (s *svg) marker(i int, x, y float64, title string) {
	if i%8 == 6 { // the cross is strokes only
		s.f(`<path d="%s" fill="none" stroke="%s" stroke-width="2.2">`, markerPath(i, x, y), color(i))
	} else {
		s.f(`<path d="%s" fill="%s" stroke="#1d2330" stroke-width="0.8">`, markerPath(i, x, y), color(i))
	}
	if title != "" {
		s.f(`<title>%s</title>`, esc(title))
	}
	s.f(`</path>`)
}

// seriesKeyW is the width of a line legend's key: a stretch of the
// series' line with its marker on it.
const seriesKeyW = 30.0

// seriesLegend is legend for line plots: each key is the series' line,
// dash and marker, so a legend entry can be matched in greyscale too.
// idx are the series' style indices (the cells' positions).
func (s *svg) seriesLegend(x, y, maxX float64, labels []string, idx []int) {
	pos, _ := legendLayoutW(x, maxX, labels, seriesKeyW)
	for k, l := range labels {
		px, py := pos[k][0], y+pos[k][1]
		i := idx[k]
		s.f(`<line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" stroke="%s" stroke-width="2.2"%s/>`, px, py-4, px+seriesKeyW-6, py-4, color(i), dashAttr(i))
		s.marker(i, px+(seriesKeyW-6)/2, py-4, "")
		s.text(px+seriesKeyW, py, "start", "legend", l)
	}
}

// seriesLegendLines is how many lines seriesLegend will take.
func seriesLegendLines(x, maxX float64, labels []string) int {
	_, n := legendLayoutW(x, maxX, labels, seriesKeyW)
	return n
}
