package toon

import (
	"math"
	"math/big"
	"strconv"
)

// Number is a decoded TOON number in canonical decimal form (spec §2): no
// exponent for 1e-6 ≤ |n| < 1e21, no leading or trailing zeros, -0 as 0,
// and exponent form like 1e+21 or 1.5e-7 outside that range. Unlike a
// float64 it keeps every digit of the source token. When encoding, a Number
// is written in canonical form; it must hold a JSON number.
type Number string

// String returns the number's text.
func (n Number) String() string { return string(n) }

// Float64 returns the nearest float64.
func (n Number) Float64() (float64, error) { return strconv.ParseFloat(string(n), 64) }

// Int64 returns the number as an int64, failing if it is not an integer
// that fits.
func (n Number) Int64() (int64, error) { return strconv.ParseInt(string(n), 10, 64) }

// isNumberToken reports whether an unquoted token decodes as a number (spec
// §4): /^-?\d+(\.\d+)?(e[+-]?\d+)?$/i without a leading zero in a
// multi-digit integer part.
func isNumberToken(s string) bool {
	i := 0
	if i < len(s) && s[i] == '-' {
		i++
	}
	start := i
	i = skipDigits(s, i)
	if i == start || (s[start] == '0' && i-start > 1) {
		return false
	}
	return scanFracExp(s, i)
}

// isNumericLike reports whether a string must be quoted because it looks
// like a number (spec §7.2): /^[+-]?\d+(\.\d+)?(e[+-]?\d+)?$/i, leading
// zeros and plus signs included.
func isNumericLike(s string) bool {
	i := 0
	if i < len(s) && (s[i] == '-' || s[i] == '+') {
		i++
	}
	start := i
	i = skipDigits(s, i)
	if i == start {
		return false
	}
	return scanFracExp(s, i)
}

func scanFracExp(s string, i int) bool {
	if i < len(s) && s[i] == '.' {
		j := i + 1
		if i = skipDigits(s, j); i == j {
			return false
		}
	}
	if i < len(s) && (s[i] == 'e' || s[i] == 'E') {
		i++
		if i < len(s) && (s[i] == '+' || s[i] == '-') {
			i++
		}
		j := i
		if i = skipDigits(s, j); i == j {
			return false
		}
	}
	return i == len(s)
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }

// isJSONNumber reports whether s is a JSON number (RFC 8259 §6), the
// grammar a Number must hold when it is encoded.
func isJSONNumber(s string) bool { return isNumberToken(s) }

// isCanonicalInt reports whether s is already canonical: an integer without
// sign of zero or leading zeros and short enough to need no exponent. It is
// the fast path of canonicalNumber.
func isCanonicalInt(s string) bool {
	i := 0
	if len(s) > 0 && s[0] == '-' {
		i = 1
	}
	n := len(s) - i
	if n == 0 || n > 21 || (s[i] == '0' && (n > 1 || i == 1)) {
		return false
	}
	for ; i < len(s); i++ {
		if !isDigit(s[i]) {
			return false
		}
	}
	return true
}

// appendCanonical appends the canonical form of a number token that
// satisfies isNumberToken. The result is exact: the digits are rearranged,
// never rounded.
func appendCanonical(dst []byte, s string) []byte {
	if isCanonicalInt(s) {
		return append(dst, s...)
	}
	neg := s[0] == '-'
	if neg {
		s = s[1:]
	}
	// Split into integer digits, fraction digits and exponent text.
	i := skipDigits(s, 0)
	intPart := s[:i]
	frac := ""
	if i < len(s) && s[i] == '.' {
		j := skipDigits(s, i+1)
		frac = s[i+1 : j]
		i = j
	}
	expText := ""
	if i < len(s) {
		expText = s[i+1:] // after 'e' or 'E'
	}
	// Significant digits are intPart+frac without leading/trailing zeros;
	// the value is 0.DIGITS × 10^point.
	var digits []byte
	point := len(intPart)
	lead := true
	for k := 0; k < len(intPart)+len(frac); k++ {
		var c byte
		if k < len(intPart) {
			c = intPart[k]
		} else {
			c = frac[k-len(intPart)]
		}
		if lead && c == '0' {
			point--
			continue
		}
		lead = false
		digits = append(digits, c)
	}
	for len(digits) > 0 && digits[len(digits)-1] == '0' {
		digits = digits[:len(digits)-1]
	}
	if len(digits) == 0 {
		return append(dst, '0')
	}
	if neg {
		dst = append(dst, '-')
	}
	if expText != "" {
		exp, ok := parseSmallExp(expText)
		if !ok {
			return appendHugeExp(dst, digits, point, expText)
		}
		point += exp
	}
	return appendDigits(dst, digits, point)
}

// parseSmallExp parses an exponent that fits comfortably in an int.
func parseSmallExp(s string) (int, bool) {
	neg := false
	if s[0] == '+' || s[0] == '-' {
		neg = s[0] == '-'
		s = s[1:]
	}
	for len(s) > 1 && s[0] == '0' {
		s = s[1:]
	}
	if len(s) > 15 {
		return 0, false
	}
	n := 0
	for i := 0; i < len(s); i++ {
		n = n*10 + int(s[i]-'0')
	}
	if neg {
		n = -n
	}
	return n, true
}

// appendHugeExp handles exponents too long for an int (1e99999999999999999)
// with big integers: always exponent form.
func appendHugeExp(dst, digits []byte, point int, expText string) []byte {
	e, _ := new(big.Int).SetString(expText, 10)
	e.Add(e, big.NewInt(int64(point-1)))
	dst = append(dst, digits[0])
	if len(digits) > 1 {
		dst = append(dst, '.')
		dst = append(dst, digits[1:]...)
	}
	dst = append(dst, 'e')
	if e.Sign() >= 0 {
		dst = append(dst, '+')
	}
	return e.Append(dst, 10)
}

// appendDigits formats 0.DIGITS × 10^point the way ECMAScript's
// Number::toString does, which is the canonical form of spec §2.
func appendDigits(dst, digits []byte, point int) []byte {
	k := len(digits)
	switch {
	case k <= point && point <= 21:
		dst = append(dst, digits...)
		for i := k; i < point; i++ {
			dst = append(dst, '0')
		}
	case 0 < point && point <= 21:
		dst = append(dst, digits[:point]...)
		dst = append(dst, '.')
		dst = append(dst, digits[point:]...)
	case -6 < point && point <= 0:
		dst = append(dst, '0', '.')
		for i := point; i < 0; i++ {
			dst = append(dst, '0')
		}
		dst = append(dst, digits...)
	default:
		dst = append(dst, digits[0])
		if k > 1 {
			dst = append(dst, '.')
			dst = append(dst, digits[1:]...)
		}
		dst = append(dst, 'e')
		e := point - 1
		if e >= 0 {
			dst = append(dst, '+')
		}
		dst = strconv.AppendInt(dst, int64(e), 10)
	}
	return dst
}

// canonicalNumber returns the canonical form of a number token.
func canonicalNumber(s string) Number {
	if isCanonicalInt(s) {
		return Number(s)
	}
	var buf [40]byte
	return Number(appendCanonical(buf[:0], s))
}

// appendFloat appends f in canonical form: the shortest digits that read
// back as f, laid out like ECMAScript's Number::toString. NaN and ±Inf
// become null (spec §3).
func appendFloat(dst []byte, f float64, bits int) []byte {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return append(dst, "null"...)
	}
	if f == 0 {
		return append(dst, '0')
	}
	if f == math.Trunc(f) && math.Abs(f) < 1e15 {
		return strconv.AppendInt(dst, int64(f), 10)
	}
	var buf [32]byte
	b := strconv.AppendFloat(buf[:0], f, 'e', -1, bits)
	if b[0] == '-' {
		dst = append(dst, '-')
		b = b[1:]
	}
	// b is d[.ddd]e±XX
	var digits [24]byte
	n := 0
	i := 0
	for ; b[i] != 'e'; i++ {
		if b[i] != '.' {
			digits[n] = b[i]
			n++
		}
	}
	exp, _ := strconv.Atoi(string(b[i+1:]))
	for n > 1 && digits[n-1] == '0' {
		n--
	}
	return appendDigits(dst, digits[:n], exp+1)
}

// skipDigits returns the index of the first non-digit of s at or after i.
func skipDigits(s string, i int) int {
	for i < len(s) && isDigit(s[i]) {
		i++
	}
	return i
}
