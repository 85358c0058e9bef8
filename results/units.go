package results

import (
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/wirebench/wirebench/measure"
)

// Format prints one value of the unit for people, with about four
// significant digits (measure.Sig4): enough to compare, few enough to
// read. It is the one formatter of metric values: reports, gates and
// compare print through it. NaN, a value not there, is "—".
func (u Unit) Format(v float64) string {
	if math.IsNaN(v) {
		return "—"
	}
	switch u {
	case UnitDuration:
		return FormatDurationSig4(time.Duration(math.Round(v)))
	case UnitBytes:
		return measure.FormatBytes(v)
	case UnitCount:
		return FormatInt(int64(math.Round(v)))
	}
	return FormatSI(v)
}

// FormatSI prints a count or rate: 281.9, 12.35k, 1.235M.
func FormatSI(v float64) string {
	a := math.Abs(v)
	switch {
	case a >= 1e9:
		return measure.Sig4(v/1e9) + "G"
	case a >= 1e6:
		return measure.Sig4(v/1e6) + "M"
	case a >= 1e3:
		return measure.Sig4(v/1e3) + "k"
	}
	return measure.Sig4(v)
}

// FormatDurationSig4 prints 748.6µs, 27.84ms, 1.235s.
func FormatDurationSig4(d time.Duration) string {
	a := d
	if a < 0 {
		a = -a
	}
	switch {
	case a >= time.Second:
		return measure.Sig4(d.Seconds()) + "s"
	case a >= time.Millisecond:
		return measure.Sig4(float64(d)/1e6) + "ms"
	case a >= time.Microsecond:
		return measure.Sig4(float64(d)/1e3) + "µs"
	}
	return strconv.FormatInt(int64(d), 10) + "ns"
}

// FormatInt prints an integer with thousands separators: 59,395. It is
// the one thousands separator of every output.
func FormatInt(n int64) string {
	s := strconv.FormatInt(n, 10)
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	var b strings.Builder
	for i, r := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(r)
	}
	if neg {
		return "-" + b.String()
	}
	return b.String()
}
