package toon

import (
	"errors"
	"fmt"
	"math"
	"strings"
)

// header is a parsed array or keyed-table header (spec §6).
type header struct {
	key    string
	hasKey bool
	length int
	delim  byte
	keyed  bool
	fields []field // nil without a fields segment
	leaves int     // leaf-field count: cells per row
	inline string  // values after the colon of a non-tabular header
}

// headerResult says what parseHeader found.
type headerResult uint8

const (
	notHeader headerResult = iota
	isHeader
)

// parseHeader recognizes an array header the way the reference decoder
// does. A line that is not a header returns notHeader; a line that starts
// like one but is malformed returns an error (in both modes, as the
// reference does since 4.4). strictErr is a problem only strict mode
// rejects (duplicate field names).
func parseHeader(content string) (h header, res headerResult, strictErr, err error) {
	if strings.IndexByte(content, '[') < 0 {
		return h, notHeader, nil, nil // fast path: every header has a '['
	}
	bracketStart := -1
	if strings.HasPrefix(content, `"`) {
		q := findClosingQuote(content, 0)
		if q < 0 || q+1 >= len(content) || content[q+1] != '[' {
			return h, notHeader, nil, nil
		}
		bracketStart = q + 1
	} else {
		bracketStart = findUnquoted(content, '[', 0)
	}
	if bracketStart < 0 {
		return h, notHeader, nil, nil
	}
	firstColon := findUnquoted(content, ':', 0)
	if firstColon < 0 || firstColon < bracketStart {
		return h, notHeader, nil, nil
	}
	bracketEnd := findUnquoted(content, ']', bracketStart)
	if bracketEnd < 0 {
		return h, notHeader, nil, errors.New("unterminated bracket segment")
	}
	braceEnd := bracketEnd + 1
	braceStart := findUnquoted(content, '{', bracketEnd)
	if braceStart >= 0 && braceStart < findUnquoted(content, ':', bracketEnd) {
		if gap := content[bracketEnd+1 : braceStart]; gap != "" {
			return h, notHeader, nil, gapError(gap, "field list")
		}
		if m := matchingBrace(content, braceStart); m >= 0 {
			braceEnd = m + 1
		}
	}
	colon := findUnquoted(content, ':', max(bracketEnd, braceEnd))
	if colon < 0 {
		return h, notHeader, nil, errors.New("missing colon after array header")
	}
	if gap := content[max(bracketEnd+1, braceEnd):colon]; gap != "" {
		return h, notHeader, nil, gapError(gap, "colon")
	}
	if bracketStart > 0 {
		raw := content[:bracketStart]
		if last := raw[len(raw)-1]; last == ' ' || last == '\t' {
			return h, notHeader, nil, errors.New("unexpected whitespace between key and bracket segment")
		}
		h.hasKey = true
		h.key = raw
		if raw[0] == '"' {
			k, err := parseStringLiteral(trimSpaces(raw))
			if err != nil {
				return h, notHeader, nil, err
			}
			h.key = k
		}
	}
	after := trimSpaces(content[colon+1:])
	if err := h.parseBracket(content[bracketStart+1 : bracketEnd]); err != nil {
		return h, notHeader, nil, err
	}
	if braceStart >= 0 && braceStart < colon {
		if m := matchingBrace(content, braceStart); m >= 0 && m < colon {
			list := content[braceStart+1 : m]
			if bad := mismatchedDelimiter(list, h.delim); bad != 0 {
				return h, notHeader, nil, fmt.Errorf("header delimiter mismatch: bracket declares %q but field list contains %q", h.delim, bad)
			}
			fields, err := parseFieldList(list, h.delim, 0)
			if err != nil {
				return h, notHeader, nil, err
			}
			h.fields = fields
			h.leaves = countLeaves(fields)
		}
	}
	if dup := duplicateField(h.fields); dup != "" {
		strictErr = fmt.Errorf("duplicate field name %q in field list", dup)
	}
	if h.keyed && h.fields == nil {
		return h, notHeader, nil, errors.New("keyed header requires a field list")
	}
	if h.fields != nil && after != "" {
		if strictErr != nil {
			return h, notHeader, nil, strictErr
		}
		return h, notHeader, nil, errors.New("unexpected content after a fields-bearing header's colon")
	}
	h.inline = after
	return h, isHeader, strictErr, nil
}

func gapError(gap, what string) error {
	if t := strings.Trim(gap, " \t"); t != "" {
		return fmt.Errorf("unexpected content %q between bracket segment and %s", t, what)
	}
	return fmt.Errorf("unexpected whitespace between bracket segment and %s", what)
}

// parseBracket reads N, the keyed marker and the delimiter symbol.
func (h *header) parseBracket(seg string) error {
	s := seg
	h.delim = ','
	if n := len(s); n > 0 && (s[n-1] == '\t' || s[n-1] == '|') {
		h.delim = s[n-1]
		s = s[:n-1]
	}
	if n := len(s); n > 0 && s[n-1] == ':' {
		h.keyed = true
		s = s[:n-1]
	}
	if s == "" || (s[0] == '0' && len(s) > 1) {
		return fmt.Errorf("invalid array length %q (want a non-negative integer without leading zeros)", seg)
	}
	n := 0
	for i := 0; i < len(s); i++ {
		if !isDigit(s[i]) {
			return fmt.Errorf("invalid array length %q (want a non-negative integer without leading zeros)", seg)
		}
		d := int(s[i] - '0')
		if n > (math.MaxInt-d)/10 {
			// No document can hold that many items; saying so beats a
			// count mismatch against a saturated 9223372036854775807.
			return fmt.Errorf("array length %s overflows (the maximum is %d)", s, math.MaxInt)
		}
		n = n*10 + d
	}
	h.length = n
	return nil
}

func matchingBrace(s string, start int) int {
	in := false
	depth := 0
	for i := start; i < len(s); i++ {
		switch c := s[i]; {
		case c == '\\' && in && i+1 < len(s):
			i++
		case c == '"':
			in = !in
		case in:
		case c == '{':
			depth++
		case c == '}':
			depth--
			if depth == 0 {
				return i
			}
		}
	}
	return -1
}

func mismatchedDelimiter(s string, active byte) byte {
	for _, c := range []byte{',', '\t', '|'} {
		if c != active && findUnquoted(s, c, 0) >= 0 {
			return c
		}
	}
	return 0
}

// maxFieldNesting bounds nested field groups, which recurse.
const maxFieldNesting = 100

func parseFieldList(s string, delim byte, depth int) ([]field, error) {
	if depth > maxFieldNesting {
		return nil, errors.New("field groups nested too deeply")
	}
	var out []field
	in := false
	braces := 0
	start := 0
	for i := 0; i <= len(s); i++ {
		if i < len(s) {
			c := s[i]
			switch {
			case c == '\\' && in && i+1 < len(s):
				i++
				continue
			case c == '"':
				in = !in
				continue
			case in:
				continue
			case c == '{':
				braces++
				continue
			case c == '}':
				braces--
				continue
			case c != delim || braces != 0:
				continue
			}
		}
		f, err := parseFieldEntry(trimSpaces(s[start:i]), delim, depth)
		if err != nil {
			return nil, err
		}
		out = append(out, f)
		start = i + 1
	}
	return out, nil
}

func parseFieldEntry(e string, delim byte, depth int) (field, error) {
	if e == "" {
		return field{}, errors.New("empty field name in field list")
	}
	g := findUnquoted(e, '{', 0)
	if g < 0 {
		name, err := fieldName(e)
		return field{name: name}, err
	}
	namePart := e[:g]
	if namePart == "" {
		return field{}, errors.New("missing field name before nested field group")
	}
	if strings.HasSuffix(namePart, " ") {
		return field{}, errors.New("unexpected whitespace before nested field group")
	}
	end := matchingBrace(e, g)
	if end < 0 {
		return field{}, errors.New("unmatched brace in field list")
	}
	if end != len(e)-1 {
		return field{}, errors.New("unexpected content after nested field group")
	}
	children, err := parseFieldList(e[g+1:end], delim, depth+1)
	if err != nil {
		return field{}, err
	}
	name, err := fieldName(namePart)
	return field{name: name, children: children}, err
}

func fieldName(s string) (string, error) {
	s = trimSpaces(s)
	if strings.HasPrefix(s, `"`) {
		return parseStringLiteral(s)
	}
	return s, nil
}

func countLeaves(fields []field) int {
	n := 0
	for _, f := range fields {
		if f.children != nil {
			n += countLeaves(f.children)
		} else {
			n++
		}
	}
	return n
}

// duplicateField returns a field name repeated among siblings, at any
// level, or "". Short lists compare pairwise (no allocation); longer ones
// use a set, so a 100k-column header costs linear time, not the 20 s of
// CPU the pairwise check took (issue 10 item 2).
func duplicateField(fields []field) string {
	var seen map[string]struct{}
	if len(fields) > 16 {
		seen = make(map[string]struct{}, len(fields))
	}
	for i, f := range fields {
		if seen != nil {
			if _, dup := seen[f.name]; dup {
				return f.name
			}
			seen[f.name] = struct{}{}
		} else {
			for _, g := range fields[:i] {
				if g.name == f.name {
					return f.name
				}
			}
		}
		if f.children != nil {
			if d := duplicateField(f.children); d != "" {
				return d
			}
		}
	}
	return ""
}
