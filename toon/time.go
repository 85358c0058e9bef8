package toon

import "time"

// appendTime appends t as time.RFC3339Nano. UTC times in years 0-9999, the
// common case for API timestamps, are formatted by hand, which is several
// times faster than time.AppendFormat's layout interpreter.
func appendTime(dst []byte, t time.Time) []byte {
	if t.Location() != time.UTC {
		return t.AppendFormat(dst, time.RFC3339Nano)
	}
	sec := t.Unix()
	days := sec / 86400
	rem := sec % 86400
	if rem < 0 {
		days--
		rem += 86400
	}
	year, month, day := civilFromDays(days)
	if year < 0 || year > 9999 {
		return t.AppendFormat(dst, time.RFC3339Nano)
	}
	// Fill a fixed buffer two digits at a time, then append once.
	var b [30]byte
	put2(b[0:], year/100)
	put2(b[2:], year%100)
	b[4] = '-'
	put2(b[5:], month)
	b[7] = '-'
	put2(b[8:], day)
	b[10] = 'T'
	put2(b[11:], int(rem/3600))
	b[13] = ':'
	put2(b[14:], int(rem/60%60))
	b[16] = ':'
	put2(b[17:], int(rem%60))
	n := 19
	if ns := t.Nanosecond(); ns != 0 {
		b[19] = '.'
		put2(b[20:], ns/10000000)
		put2(b[22:], ns/100000%100)
		put2(b[24:], ns/1000%100)
		put2(b[26:], ns/10%100)
		b[28] = byte('0' + ns%10)
		n = 29
		for b[n-1] == '0' {
			n--
		}
	}
	b[n] = 'Z'
	return append(dst, b[:n+1]...)
}

const digitPairs = "00010203040506070809101112131415161718192021222324252627282930313233343536373839" +
	"4041424344454647484950515253545556575859606162636465666768697071727374757677787980818283848586878889" +
	"90919293949596979899"

// put2 writes v (0-99) as two digits.
func put2(b []byte, v int) {
	_ = b[1]
	b[0], b[1] = digitPairs[2*v], digitPairs[2*v+1]
}

// civilFromDays is the inverse of daysFromCivil.
func civilFromDays(z int64) (year, month, day int) {
	z += 719468
	era := z
	if era < 0 {
		era -= 146096
	}
	era /= 146097
	doe := z - era*146097
	yoe := (doe - doe/1460 + doe/36524 - doe/146096) / 365
	y := yoe + era*400
	doy := doe - (365*yoe + yoe/4 - yoe/100)
	mp := (5*doy + 2) / 153
	d := doy - (153*mp+2)/5 + 1
	m := mp + 3
	if m > 12 {
		m -= 12
	}
	if m <= 2 {
		y++
	}
	return int(y), int(m), int(d)
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
	days := daysFromCivil(year, month, day)
	return time.Unix(days*86400+int64(hour*3600+min*60+sec), int64(ns)).UTC(), true
}

// daysFromCivil returns the days since 1970-01-01 of a proleptic
// Gregorian date (Howard Hinnant's algorithm); cheaper than time.Date's
// normalization, which a validated date does not need.
func daysFromCivil(y, m, d int) int64 {
	if m <= 2 {
		y--
	}
	era := y
	if era < 0 {
		era -= 399
	}
	era /= 400
	yoe := y - era*400
	mp := (m + 9) % 12
	doy := (153*mp+2)/5 + d - 1
	doe := yoe*365 + yoe/4 - yoe/100 + doy
	return int64(era)*146097 + int64(doe) - 719468
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
