package toon

import "time"

// appendTime appends t as time.RFC3339Nano. UTC times in years 0-9999, the
// common case for API timestamps, are formatted by hand, which is several
// times faster than time.AppendFormat's layout interpreter.
func appendTime(dst []byte, t time.Time) []byte {
	if t.Location() != time.UTC {
		return t.AppendFormat(dst, time.RFC3339Nano)
	}
	year, month, day := t.Date()
	if year < 0 || year > 9999 {
		return t.AppendFormat(dst, time.RFC3339Nano)
	}
	hour, min, sec := t.Clock()
	dst = append(dst,
		byte('0'+year/1000), byte('0'+year/100%10), byte('0'+year/10%10), byte('0'+year%10), '-',
		byte('0'+month/10), byte('0'+month%10), '-',
		byte('0'+day/10), byte('0'+day%10), 'T',
		byte('0'+hour/10), byte('0'+hour%10), ':',
		byte('0'+min/10), byte('0'+min%10), ':',
		byte('0'+sec/10), byte('0'+sec%10))
	if ns := t.Nanosecond(); ns != 0 {
		var frac [10]byte
		frac[0] = '.'
		for i := 9; i >= 1; i-- {
			frac[i] = byte('0' + ns%10)
			ns /= 10
		}
		n := 10
		for frac[n-1] == '0' {
			n--
		}
		dst = append(dst, frac[:n]...)
	}
	return append(dst, 'Z')
}

// parseTime parses RFC 3339 with optional fractional seconds. The UTC form
// ("Z") is parsed by hand; anything else goes to time.Parse, which also
// produces the error messages.
func parseTime(s string) (time.Time, error) {
	if t, ok := parseUTC(s); ok {
		return t, nil
	}
	return time.Parse(time.RFC3339Nano, s)
}

func parseUTC(s string) (time.Time, bool) {
	if len(s) < 20 || s[len(s)-1] != 'Z' || s[4] != '-' || s[7] != '-' || s[10] != 'T' || s[13] != ':' || s[16] != ':' {
		return time.Time{}, false
	}
	d2 := func(i int) int { // two digits, or -1
		a, b := s[i]-'0', s[i+1]-'0'
		if a > 9 || b > 9 {
			return -1
		}
		return int(a)*10 + int(b)
	}
	y1, y2 := d2(0), d2(2)
	month, day, hour, min, sec := d2(5), d2(8), d2(11), d2(14), d2(17)
	if y1 < 0 || y2 < 0 || month < 1 || month > 12 || day < 1 || hour < 0 || hour > 23 ||
		min < 0 || min > 59 || sec < 0 || sec > 59 {
		return time.Time{}, false
	}
	year := y1*100 + y2
	if day > daysIn(month, year) {
		return time.Time{}, false
	}
	ns := 0
	rest := s[19 : len(s)-1]
	if rest != "" {
		if rest[0] != '.' || len(rest) < 2 || len(rest) > 10 {
			return time.Time{}, false
		}
		for _, c := range []byte(rest[1:]) {
			if c < '0' || c > '9' {
				return time.Time{}, false
			}
			ns = ns*10 + int(c-'0')
		}
		for digits := len(rest) - 1; digits < 9; digits++ {
			ns *= 10
		}
	}
	return time.Date(year, time.Month(month), day, hour, min, sec, ns, time.UTC), true
}

func daysIn(month, year int) int {
	switch month {
	case 2:
		if year%4 == 0 && (year%100 != 0 || year%400 == 0) {
			return 29
		}
		return 28
	case 4, 6, 9, 11:
		return 30
	}
	return 31
}
