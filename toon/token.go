package toon

import (
	"errors"
	"strings"
	"unicode/utf8"
)

// These helpers reproduce the reference implementation's lexical rules
// exactly (quote toggling, escapes skipped only inside quotes), because
// disagreeing on where a quoted region ends would change how a line is
// classified.

// findUnquoted returns the index of the first c at or after start that is
// outside double quotes, or -1.
func findUnquoted(s string, c byte, start int) int {
	in := false
	for i := start; i < len(s); i++ {
		switch ch := s[i]; {
		case ch == '\\' && in && i+1 < len(s):
			i++
		case ch == '"':
			in = !in
		case ch == c && !in:
			return i
		}
	}
	return -1
}

// findClosingQuote returns the index of the quote closing the one at start.
func findClosingQuote(s string, start int) int {
	for i := start + 1; i < len(s); i++ {
		switch s[i] {
		case '\\':
			if i+1 < len(s) {
				i++
			}
		case '"':
			return i
		}
	}
	return -1
}

func trimSpaces(s string) string {
	i, j := 0, len(s)
	for i < j && s[i] == ' ' {
		i++
	}
	for j > i && s[j-1] == ' ' {
		j--
	}
	return s[i:j]
}

// cellStop[d][c] marks the bytes where scanning a cell for delimiter d
// must look closer: the delimiter itself, quotes and backslashes.
var cellStop = func() (t [3][256]bool) {
	for i, d := range []byte{',', '\t', '|'} {
		t[i]['"'], t[i]['\\'], t[i][d] = true, true, true
	}
	return t
}()

func stopTable(delim byte) *[256]bool {
	switch delim {
	case '\t':
		return &cellStop[1]
	case '|':
		return &cellStop[2]
	}
	return &cellStop[0]
}

// nextCell returns the cell of s starting at byte i, spaces trimmed, and
// the index after its delimiter (len(s)+1 after the last cell). Quotes
// toggle a quoted region and backslashes inside one escape the next byte,
// as in the reference's parseDelimitedValues.
func nextCell(s string, i int, delim byte, stop *[256]bool) (string, int) {
	start := i
	in := false
	for ; i < len(s); i++ {
		c := s[i]
		if !stop[c] {
			continue
		}
		switch {
		case c == '\\':
			if in && i+1 < len(s) {
				i++
			}
		case c == '"':
			in = !in
		case !in: // the delimiter
			return trimSpaces(s[start:i]), i + 1
		}
	}
	return trimSpaces(s[start:]), len(s) + 1
}

// nextToken is nextCell fused with parsePrimitive for the common cells:
// a bare token without quotes or backslashes, or a quoted string followed
// only by spaces. It scans the cell once and reports ok=false for anything
// else, which the caller hands to the general path.
func nextToken(s string, i int, stop *[256]bool) (t token, next int, ok bool) {
	for i < len(s) && s[i] == ' ' {
		i++
	}
	start := i
	if i < len(s) && s[i] == '"' {
		esc := false
		j := i + 1
		for ; j < len(s); j++ {
			if c := s[j]; c == '"' {
				break
			} else if c == '\\' {
				esc = true
				j++
			}
		}
		if j >= len(s) {
			return t, 0, false // unterminated: let the general path say so
		}
		k := j + 1
		for k < len(s) && s[k] == ' ' {
			k++
		}
		if k < len(s) && (!stop[s[k]] || s[k] == '"' || s[k] == '\\') {
			return t, 0, false // content after the closing quote
		}
		str := s[i+1 : j]
		if esc {
			var err error
			if str, err = unescape(str); err != nil {
				return t, 0, false
			}
		}
		return token{kind: tokString, s: str}, k + 1, true
	}
	for ; i < len(s); i++ {
		if stop[s[i]] {
			if s[i] == '"' || s[i] == '\\' {
				return t, 0, false
			}
			break
		}
	}
	j := i
	for j > start && s[j-1] == ' ' {
		j--
	}
	tok := s[start:j]
	t = token{kind: tokString, s: tok}
	if len(tok) > 0 {
		switch c := tok[0]; {
		case c == 't' && tok == "true":
			t.kind = tokTrue
		case c == 'f' && tok == "false":
			t.kind = tokFalse
		case c == 'n' && tok == "null":
			t.kind = tokNull
		case (c == '-' || isDigit(c)) && isNumberToken(tok):
			t.kind = tokNumber
		}
	}
	return t, i + 1, true
}

// splitDelimited splits s on unquoted delim, trimming spaces around each
// cell, appending to cells (reused scratch). An empty s has no cells.
func splitDelimited(cells []string, s string, delim byte) []string {
	cells = cells[:0]
	if s == "" {
		return cells
	}
	stop := stopTable(delim)
	for i := 0; i <= len(s); {
		var c string
		c, i = nextCell(s, i, delim, stop)
		cells = append(cells, c)
	}
	return cells
}

// tokKind classifies a primitive token.
type tokKind uint8

const (
	tokString tokKind = iota
	tokNumber
	tokTrue
	tokFalse
	tokNull
)

func (k tokKind) String() string {
	return [...]string{"string", "number", "boolean", "boolean", "null"}[k]
}

// token is a decoded primitive. For strings s is the unescaped text; for
// numbers the token as written.
type token struct {
	kind tokKind
	s    string
	col  int // 1-based column in its line, for errors
}

var (
	errUnterminated = errors.New("unterminated string")
	errAfterQuote   = errors.New("unexpected characters after closing quote")
)

// parsePrimitive types an unquoted or quoted token (spec §4).
func parsePrimitive(s string) (token, error) {
	s = trimSpaces(s)
	if s == "" {
		return token{kind: tokString}, nil
	}
	switch s[0] {
	case '"':
		str, err := parseStringLiteral(s)
		return token{kind: tokString, s: str}, err
	case 't':
		if s == "true" {
			return token{kind: tokTrue, s: s}, nil
		}
	case 'f':
		if s == "false" {
			return token{kind: tokFalse, s: s}, nil
		}
	case 'n':
		if s == "null" {
			return token{kind: tokNull, s: s}, nil
		}
	case '-', '0', '1', '2', '3', '4', '5', '6', '7', '8', '9':
		if isNumberToken(s) {
			return token{kind: tokNumber, s: s}, nil
		}
	}
	return token{kind: tokString, s: s}, nil
}

// parseStringLiteral decodes a token that starts with a quote, which must
// end with the closing quote.
func parseStringLiteral(s string) (string, error) {
	end := findClosingQuote(s, 0)
	if end < 0 {
		return "", errUnterminated
	}
	if end != len(s)-1 {
		return "", errAfterQuote
	}
	return unescape(s[1:end])
}

// unescape decodes the escapes of spec §7.1. Text without a backslash is
// returned as is, without allocating.
func unescape(s string) (string, error) {
	i := strings.IndexByte(s, '\\')
	if i < 0 {
		return s, nil
	}
	b := make([]byte, 0, len(s))
	b = append(b, s[:i]...)
	for i < len(s) {
		c := s[i]
		if c != '\\' {
			b = append(b, c)
			i++
			continue
		}
		if i+1 >= len(s) {
			return "", errors.New("invalid escape: backslash at end of string")
		}
		switch s[i+1] {
		case 'n':
			b = append(b, '\n')
		case 't':
			b = append(b, '\t')
		case 'r':
			b = append(b, '\r')
		case '\\':
			b = append(b, '\\')
		case '"':
			b = append(b, '"')
		case 'u':
			if i+6 > len(s) {
				return "", errors.New(`invalid escape: truncated \u escape`)
			}
			r := rune(0)
			for _, h := range []byte(s[i+2 : i+6]) {
				var v byte
				switch {
				case h >= '0' && h <= '9':
					v = h - '0'
				case h|0x20 >= 'a' && h|0x20 <= 'f':
					v = h | 0x20 - 'a' + 10
				default:
					return "", errors.New(`invalid escape: \u needs 4 hex digits`)
				}
				r = r<<4 | rune(v)
			}
			if r >= 0xD800 && r <= 0xDFFF {
				return "", errors.New(`invalid escape: \u escape of a surrogate; supplementary characters must be literal UTF-8`)
			}
			b = utf8.AppendRune(b, r)
			i += 6
			continue
		default:
			return "", errors.New(`invalid escape \` + string(rune(s[i+1])))
		}
		i += 2
	}
	return string(b), nil
}

// parseKey reads the key at content[start:] up to its colon and returns
// the key and the offset after the colon.
func parseKey(content string, start int) (string, int, error) {
	if start < len(content) && content[start] == '"' {
		end := findClosingQuote(content, start)
		if end < 0 {
			return "", 0, errors.New("unterminated quoted key")
		}
		key, err := unescape(content[start+1 : end])
		if err != nil {
			return "", 0, err
		}
		i := end + 1
		for i < len(content) && content[i] == ' ' {
			i++
		}
		if i >= len(content) || content[i] != ':' {
			return "", 0, errors.New("missing colon after key")
		}
		return key, i + 1, nil
	}
	colon := findUnquoted(content, ':', start)
	if colon < 0 {
		return "", 0, errors.New("missing colon after key")
	}
	return trimSpaces(content[start:colon]), colon + 1, nil
}

func isKeyValue(content string) bool { return findUnquoted(content, ':', 0) >= 0 }

func isArrayHeaderContent(content string) bool {
	t := trimSpaces(content)
	return len(t) > 0 && t[0] == '[' && findUnquoted(content, ':', 0) >= 0
}

// rowStop[d][c] marks the bytes isDataRow must look at under delimiter d.
var rowStop = func() (t [3][256]bool) {
	for i, d := range []byte{',', '\t', '|'} {
		t[i]['"'], t[i]['\\'], t[i][':'], t[i][d] = true, true, true, true
	}
	return t
}()

// isDataRow decides between a tabular row and a key-value line (§9.3):
// a row unless an unquoted colon comes before the first unquoted
// delimiter. One table-driven pass that stops at the first of the two.
func isDataRow(content string, delim byte) bool {
	stop := &rowStop[0]
	switch delim {
	case '\t':
		stop = &rowStop[1]
	case '|':
		stop = &rowStop[2]
	}
	in := false
	for i := 0; i < len(content); i++ {
		c := content[i]
		if !stop[c] {
			continue
		}
		switch {
		case c == '\\':
			if in && i+1 < len(content) {
				i++
			}
		case c == '"':
			in = !in
		case in:
		case c == delim:
			return true
		default: // ':'
			return false
		}
	}
	return true
}
