package report

import (
	"fmt"
	"html"
	"math"
	"strings"
	"unicode/utf8"
)

// Plots are inline SVG written here rather than by a charting library:
// the page must work offline and from a file (no CDN, no script), and the
// four chart types we need fit in a few hundred lines.

// palette is colour-blind safe (Okabe–Ito's eight), in the order cells
// get them: neighbours differ in hue and lightness, the colours that meet
// (orange and vermillion) are apart, and yellow, faint on white, comes
// last. Lines also differ in dash and marker (style.go).
var palette = []string{"#0072B2", "#D55E00", "#009E73", "#CC79A7", "#E69F00", "#56B4E9", "#000000", "#F0E442"}

func color(i int) string { return palette[i%len(palette)] }

// svg accumulates one chart.
type svg struct {
	b    strings.Builder
	w, h float64
}

func newSVG(w, h float64, title string) *svg {
	s := &svg{w: w, h: h}
	s.f(`<svg xmlns="http://www.w3.org/2000/svg" class="plot" viewBox="0 0 %g %g" width="%g" height="%g" role="img" aria-label="%s">`, w, h, w, h, esc(title))
	s.f(`<title>%s</title>`, esc(title))
	return s
}

func (s *svg) f(format string, a ...any) { fmt.Fprintf(&s.b, format, a...) }

func (s *svg) String() string { return s.b.String() + "</svg>" }

func (s *svg) text(x, y float64, anchor, class, t string) {
	s.f(`<text x="%.1f" y="%.1f" text-anchor="%s" class="%s">%s</text>`, x, y, anchor, class, esc(t))
}

func (s *svg) line(x1, y1, x2, y2 float64, class string) {
	s.f(`<line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" class="%s"/>`, x1, y1, x2, y2, class)
}

func esc(s string) string { return html.EscapeString(s) }

// scale maps a data interval onto a pixel interval.
type scale struct {
	d0, d1, p0, p1 float64
}

func (sc scale) at(v float64) float64 {
	if sc.d1 == sc.d0 {
		return sc.p0
	}
	return sc.p0 + (v-sc.d0)/(sc.d1-sc.d0)*(sc.p1-sc.p0)
}

// niceTicks returns about n round tick values covering [0, hi].
func niceTicks(hi float64, n int) []float64 {
	if hi <= 0 || math.IsNaN(hi) || math.IsInf(hi, 0) {
		return []float64{0, 1}
	}
	raw := hi / float64(n)
	mag := math.Pow(10, math.Floor(math.Log10(raw)))
	step := mag
	for _, m := range []float64{1, 2, 2.5, 5, 10} {
		if m*mag >= raw {
			step = m * mag
			break
		}
	}
	var ts []float64
	for v := 0.0; v < hi+step*0.999; v += step {
		ts = append(ts, v)
	}
	return ts
}

// byteTicks are niceTicks in the unit the labels will use (B, KiB,
// MiB, GiB), so the axis reads 0, 512 KiB, 1 MiB rather than 1.465 KiB.
func byteTicks(hi float64, n int) []float64 {
	unit := 1.0
	for unit*1024 <= hi && unit < 1<<30 {
		unit *= 1024
	}
	ts := niceTicks(hi/unit, n)
	for i := range ts {
		ts[i] *= unit
	}
	return ts
}

// trimZeros shortens a tick label: "5.000ms" → "5ms", "2.500k" → "2.5k".
func trimZeros(s string) string {
	num, unit := splitUnit(s)
	if strings.Contains(num, ".") {
		num = strings.TrimRight(strings.TrimRight(num, "0"), ".")
	}
	return num + unit
}

// textWidth estimates how wide s renders at a font size in px. SVG text
// cannot be measured without a browser, so margins are sized from this
// estimate; 0.6 em per character errs on the wide side for the bold
// system-ui labels, which is the side that does not clip.
func textWidth(s string, size float64) float64 {
	return float64(utf8.RuneCountInString(s)) * size * 0.6
}

// maxTextWidth is the widest of labels at a font size.
func maxTextWidth(labels []string, size float64) float64 {
	w := 0.0
	for _, l := range labels {
		w = math.Max(w, textWidth(l, size))
	}
	return w
}

const (
	legendFont  = 12.0 // px, as svg .legend in html.tmpl
	legendLineH = 18.0
)

// legendLayout places coloured keys left to right from x, starting a new
// line before a key would pass maxX, so six or more cells with long names
// wrap instead of running off the plot. It returns each key's offset from
// the first line's start and the number of lines.
func legendLayout(x, maxX float64, labels []string) (pos [][2]float64, lines int) {
	return legendLayoutW(x, maxX, labels, 16)
}

// legendLayoutW is legendLayout with keys keyW wide (a swatch, or a line
// with its marker) before each label.
func legendLayoutW(x, maxX float64, labels []string, keyW float64) (pos [][2]float64, lines int) {
	cx, cy := x, 0.0
	lines = min(1, len(labels))
	for _, l := range labels {
		w := keyW + textWidth(l, legendFont)
		if cx > x && cx+w > maxX {
			cx, cy = x, cy+legendLineH
			lines++
		}
		pos = append(pos, [2]float64{cx, cy})
		cx += w + 14
	}
	return pos, lines
}

// legend draws coloured keys from (x, y), wrapping before maxX; the plot
// must have room for legendLines(x, maxX, labels) lines below y.
func (s *svg) legend(x, y, maxX float64, labels []string, colors []string) {
	pos, _ := legendLayout(x, maxX, labels)
	for i, l := range labels {
		px, py := pos[i][0], y+pos[i][1]
		s.f(`<rect x="%.1f" y="%.1f" width="12" height="12" rx="2" fill="%s"/>`, px, py-10, colors[i])
		s.text(px+16, py, "start", "legend", l)
	}
}

// legendLines is how many lines legend will take.
func legendLines(x, maxX float64, labels []string) int {
	_, n := legendLayout(x, maxX, labels)
	return n
}
