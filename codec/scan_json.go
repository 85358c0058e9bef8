package codec

import (
	"unicode/utf8"
)

// scanJSON checks that b is exactly one RFC 8259 JSON value within lim:
// validJSON's one pass, and explainJSON's for the error of a refused body.
func scanJSON(b []byte, lim Limits) error {
	if validJSON(b, lim) {
		return nil
	}
	return explainJSON(b, lim)
}

// explainJSON is scanJSON's exact pass, without recursion, naming what it
// refuses and where. Beyond what encoding/json checks, it refuses what the
// libraries would otherwise replace with U+FFFD: ill-formed UTF-8 in a
// string and \u escapes of unpaired surrogates (every other format refuses
// such text, so JSON does too).
func explainJSON(b []byte, lim Limits) error {
	const format = "json"
	// stack holds the open containers, '{' or '['; count the elements of
	// each, to apply MaxItems.
	var stackBuf [16]byte // no allocation for the usual shallow body
	var countBuf [16]int
	stack, count := stackBuf[:0], countBuf[:0]
	i := skipSpace(b, 0)
	for {
		// A value starts at i.
		if i >= len(b) {
			return scanError(format, ErrSyntax, i, "unexpected end of input, want a value")
		}
		switch c := b[i]; c {
		case '{', '[':
			if len(stack) >= lim.MaxDepth {
				return scanError(format, ErrDepth, i, "more than %d levels", lim.MaxDepth)
			}
			stack, count = append(stack, c), append(count, 0)
			i = skipSpace(b, i+1)
			if i < len(b) && (b[i] == '}' && c == '{' || b[i] == ']' && c == '[') {
				stack, count = stack[:len(stack)-1], count[:len(count)-1]
				i++
				break // an empty container is a complete value
			}
			if c == '{' {
				var err error
				if i, err = scanKey(b, i); err != nil {
					return err
				}
			}
			continue
		case '"':
			var err error
			if i, err = scanString(b, i); err != nil {
				return err
			}
		case 't':
			if !hasLiteral(b, i, "true") {
				return scanError(format, ErrSyntax, i, "invalid literal")
			}
			i += 4
		case 'f':
			if !hasLiteral(b, i, "false") {
				return scanError(format, ErrSyntax, i, "invalid literal")
			}
			i += 5
		case 'n':
			if !hasLiteral(b, i, "null") {
				return scanError(format, ErrSyntax, i, "invalid literal")
			}
			i += 4
		default:
			var err error
			if i, err = scanNumber(b, i); err != nil {
				return err
			}
		}
		// A value ended before i: close containers, or go on to the next
		// element.
		for {
			i = skipSpace(b, i)
			if len(stack) == 0 {
				if i != len(b) {
					return scanError(format, ErrTrailing, i, "%d bytes after the value", len(b)-i)
				}
				return nil
			}
			if i >= len(b) {
				return scanError(format, ErrSyntax, i, "unexpected end of input inside %d open containers", len(stack))
			}
			top := len(stack) - 1
			if c := b[i]; c == '}' && stack[top] == '{' || c == ']' && stack[top] == '[' {
				stack, count = stack[:top], count[:top]
				i++
				continue
			}
			if b[i] != ',' {
				return scanError(format, ErrSyntax, i, "want ',' or the end of the container, got %q", b[i])
			}
			if count[top]++; count[top] >= lim.MaxItems {
				return scanError(format, ErrTooMany, i, "more than %d elements", lim.MaxItems)
			}
			i = skipSpace(b, i+1)
			if stack[top] == '{' {
				var err error
				if i, err = scanKey(b, i); err != nil {
					return err
				}
			}
			break
		}
	}
}

// scanKey scans `"key" :` from i and returns the offset after the colon and
// the space after it.
func scanKey(b []byte, i int) (int, error) {
	if i >= len(b) || b[i] != '"' {
		return i, scanError("json", ErrSyntax, i, "want a string key")
	}
	i, err := scanString(b, i)
	if err != nil {
		return i, err
	}
	i = skipSpace(b, i)
	if i >= len(b) || b[i] != ':' {
		return i, scanError("json", ErrSyntax, i, "want ':' after a key")
	}
	return skipSpace(b, i+1), nil
}

// scanString scans the string starting at b[i] == '"' and returns the
// offset after its closing quote.
func scanString(b []byte, i int) (int, error) {
	start := i
	i++
	for i < len(b) {
		c := b[i]
		switch {
		case c == '"':
			return i + 1, nil
		case c < 0x20:
			return i, scanError("json", ErrSyntax, i, "control character 0x%02x in a string", c)
		case c == '\\':
			if i+1 >= len(b) {
				return i, scanError("json", ErrSyntax, i, "truncated escape")
			}
			switch b[i+1] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
				i += 2
			case 'u':
				r, ok := hex4(b, i+2)
				if !ok {
					return i, scanError("json", ErrSyntax, i, "invalid \\u escape")
				}
				i += 6
				switch {
				case r >= 0xdc00 && r <= 0xdfff:
					return i, scanError("json", ErrSyntax, i-6, "unpaired low surrogate \\u%04x", r)
				case r >= 0xd800 && r <= 0xdbff:
					if lo, ok := hex4(b, i+2); !ok || b[i] != '\\' || b[i+1] != 'u' || lo < 0xdc00 || lo > 0xdfff {
						return i, scanError("json", ErrSyntax, i-6, "unpaired high surrogate \\u%04x", r)
					}
					i += 6
				}
			default:
				return i, scanError("json", ErrSyntax, i, "invalid escape \\%c", b[i+1])
			}
		case c < utf8.RuneSelf:
			i++
		default:
			r, size := utf8.DecodeRune(b[i:])
			if r == utf8.RuneError && size == 1 {
				return i, scanError("json", ErrSyntax, i, "string is not valid UTF-8")
			}
			i += size
		}
	}
	return i, scanError("json", ErrSyntax, start, "unterminated string")
}

// hex4 decodes the four hex digits at b[i:i+4].
func hex4(b []byte, i int) (rune, bool) {
	if i < 0 || i+4 > len(b) {
		return 0, false
	}
	var r rune
	for _, c := range b[i : i+4] {
		switch {
		case '0' <= c && c <= '9':
			c -= '0'
		case 'a' <= c && c <= 'f':
			c -= 'a' - 10
		case 'A' <= c && c <= 'F':
			c -= 'A' - 10
		default:
			return 0, false
		}
		r = r<<4 | rune(c)
	}
	return r, true
}

// scanNumber scans -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)? at i.
func scanNumber(b []byte, i int) (int, error) {
	start := i
	if i < len(b) && b[i] == '-' {
		i++
	}
	switch {
	case i < len(b) && b[i] == '0':
		i++
	case i < len(b) && '1' <= b[i] && b[i] <= '9':
		i = digits(b, i)
	default:
		return i, scanError("json", ErrSyntax, start, "invalid value")
	}
	if i < len(b) && b[i] == '.' {
		j := digits(b, i+1)
		if j == i+1 {
			return i, scanError("json", ErrSyntax, i, "no digits after the decimal point")
		}
		i = j
	}
	if i < len(b) && (b[i] == 'e' || b[i] == 'E') {
		i++
		if i < len(b) && (b[i] == '+' || b[i] == '-') {
			i++
		}
		j := digits(b, i)
		if j == i {
			return i, scanError("json", ErrSyntax, i, "no digits in the exponent")
		}
		i = j
	}
	return i, nil
}

func digits(b []byte, i int) int {
	for i < len(b) && '0' <= b[i] && b[i] <= '9' {
		i++
	}
	return i
}

func hasLiteral(b []byte, i int, lit string) bool {
	return len(b)-i >= len(lit) && string(b[i:i+len(lit)]) == lit
}

func skipSpace(b []byte, i int) int {
	for i < len(b) {
		switch b[i] {
		case ' ', '\t', '\n', '\r':
			i++
		default:
			return i
		}
	}
	return i
}
