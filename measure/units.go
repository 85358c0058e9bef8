package measure

import (
	"math"
	"strconv"
)

// FormatBytes prints a byte count in binary (IEC) units, the one
// convention of every wirebench output (load summary, reports, compare):
// 512 B, 1.205 KiB, 44.1 MiB, 2.5 GiB. Binary because memory, the other
// byte quantity we report, is counted in pages; and "KiB" cannot be
// misread as 1000 bytes. About four significant digits.
func FormatBytes(v float64) string {
	a := math.Abs(v)
	switch {
	case a >= 1<<40:
		return Sig4(v/(1<<40)) + " TiB"
	case a >= 1<<30:
		return Sig4(v/(1<<30)) + " GiB"
	case a >= 1<<20:
		return Sig4(v/(1<<20)) + " MiB"
	case a >= 1<<10:
		return Sig4(v/(1<<10)) + " KiB"
	}
	if v == math.Trunc(v) {
		return strconv.FormatFloat(v, 'f', 0, 64) + " B"
	}
	return strconv.FormatFloat(v, 'f', 1, 64) + " B"
}

// Sig4 prints v with four significant digits, without exponent.
func Sig4(v float64) string {
	a := math.Abs(v)
	switch {
	case a == 0:
		return "0"
	case a >= 1000:
		return strconv.FormatFloat(v, 'f', 0, 64)
	case a >= 100:
		return strconv.FormatFloat(v, 'f', 1, 64)
	case a >= 10:
		return strconv.FormatFloat(v, 'f', 2, 64)
	}
	return strconv.FormatFloat(v, 'f', 3, 64)
}
