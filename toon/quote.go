package toon

import (
	"unicode/utf8"
)

// byteClass[d][c] classifies byte c for values under delimiter d (comma,
// tab, pipe): classQuote for bytes that force quotes wherever they appear
// (spec §7.2: controls, '"', '\\', ':', brackets, braces, the delimiter),
// classHigh for non-ASCII bytes, which need a UTF-8 check. One table
// lookup per byte, OR-ed together, keeps the scan branch-free.
var byteClass = func() (t [3][256]uint8) {
	for i, d := range []byte{',', '\t', '|'} {
		for c := 0; c < 256; c++ {
			switch {
			case c < 0x20, c == '"', c == '\\':
				t[i][c] = classQuote | classEscape
			case c == ':', c == '[', c == ']', c == '{', c == '}', c == int(d):
				t[i][c] = classQuote
			case c >= utf8.RuneSelf:
				t[i][c] = classHigh
			}
		}
	}
	return t
}()

const (
	classQuote  = 1 << iota // forces quotes
	classEscape             // needs an escape inside quotes
	classHigh               // non-ASCII
)

// scanString classifies s in one pass: the union of its bytes' classes,
// with classQuote added for the rules that look at the whole string; s
// must be quoted when delim is the relevant delimiter (spec §7.2, §11.1)
// if the result has classQuote.
func scanString(s string, delim Delimiter) uint8 {
	if s == "" {
		return classQuote
	}
	tbl := &byteClass[delimIndex(delim)]
	var acc uint8
	i := 0
	for ; i+4 <= len(s); i += 4 {
		acc |= tbl[s[i]] | tbl[s[i+1]] | tbl[s[i+2]] | tbl[s[i+3]]
	}
	for ; i < len(s); i++ {
		acc |= tbl[s[i]]
	}
	if acc&classQuote != 0 {
		return acc
	}
	switch s[0] {
	case ' ', '\t', '-', '#':
		return acc | classQuote
	}
	switch s[len(s)-1] {
	case ' ', '\t':
		return acc | classQuote
	}
	if s == "true" || s == "false" || s == "null" || ((isDigit(s[0]) || s[0] == '+') && isNumericLike(s)) {
		return acc | classQuote
	}
	return acc
}

// appendString appends s as a value: bare when safe, quoted otherwise.
// Ill-formed UTF-8 is replaced by U+FFFD, as encoding/json does, so the
// output is always valid UTF-8.
func appendString(dst []byte, s string, delim Delimiter) []byte {
	c := scanString(s, delim)
	if c&classHigh != 0 && !utf8.ValidString(s) {
		return appendQuoted(dst, s) // replaces the bad bytes
	}
	switch {
	case c&classQuote == 0:
		return append(dst, s...)
	case c&classEscape == 0: // quotes, but nothing to escape inside them
		dst = append(dst, '"')
		dst = append(dst, s...)
		return append(dst, '"')
	}
	return appendQuoted(dst, s)
}

// validUTF8 is utf8.ValidString with an ASCII fast path that tests eight
// bytes at a time.
func validUTF8(s string) bool {
	i := 0
	for ; i+8 <= len(s); i += 8 {
		w := uint64(s[i]) | uint64(s[i+1])<<8 | uint64(s[i+2])<<16 | uint64(s[i+3])<<24 |
			uint64(s[i+4])<<32 | uint64(s[i+5])<<40 | uint64(s[i+6])<<48 | uint64(s[i+7])<<56
		if w&0x8080808080808080 != 0 {
			return utf8.ValidString(s[i:])
		}
	}
	for ; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			return utf8.ValidString(s[i:])
		}
	}
	return true
}

const hexDigits = "0123456789abcdef"

// appendQuoted appends s in double quotes with the escapes of spec §7.1.
func appendQuoted(dst []byte, s string) []byte {
	dst = append(dst, '"')
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c >= utf8.RuneSelf {
			r, size := utf8.DecodeRuneInString(s[i:])
			if r == utf8.RuneError && size == 1 {
				dst = append(dst, s[start:i]...)
				dst = append(dst, "\uFFFD"...)
				i++
				start = i
				continue
			}
			i += size
			continue
		}
		if c >= 0x20 && c != '"' && c != '\\' {
			i++
			continue
		}
		dst = append(dst, s[start:i]...)
		switch c {
		case '"':
			dst = append(dst, '\\', '"')
		case '\\':
			dst = append(dst, '\\', '\\')
		case '\n':
			dst = append(dst, '\\', 'n')
		case '\r':
			dst = append(dst, '\\', 'r')
		case '\t':
			dst = append(dst, '\\', 't')
		default:
			dst = append(dst, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xF])
		}
		i++
		start = i
	}
	dst = append(dst, s[start:]...)
	return append(dst, '"')
}

// isBareKey reports whether a key may be written without quotes (spec
// §7.3): ^[A-Za-z_][A-Za-z0-9_.]*$.
func isBareKey(s string) bool {
	if s == "" {
		return false
	}
	c := s[0]
	if !(c == '_' || (c|0x20 >= 'a' && c|0x20 <= 'z')) {
		return false
	}
	for i := 1; i < len(s); i++ {
		c := s[i]
		if !(c == '_' || c == '.' || isDigit(c) || (c|0x20 >= 'a' && c|0x20 <= 'z')) {
			return false
		}
	}
	return true
}

// appendKey appends an object key, field name or entry key.
func appendKey(dst []byte, k string) []byte {
	if isBareKey(k) {
		return append(dst, k...)
	}
	return appendQuoted(dst, k)
}
