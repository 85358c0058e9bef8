package flow

import (
	"bytes"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"
)

// Path is a compiled JSON path of the small subset flows use: $ followed
// by member names (.name, or ['name'] / ["name"] for names with dots,
// brackets or spaces) and array indexes ([0]), as in $.items[0].id or
// $[5].title. No wildcards, slices, filters or recursive descent: a
// capture names one value.
type Path struct {
	src  string
	segs []seg
}

type seg struct {
	key   string
	index int // >= 0: an array index; -1: a member name
}

// ErrPath is a path outside the subset.
var ErrPath = errors.New("bad JSON path")

// MaxPathSegments bounds a path's depth (each one a level of nesting).
const MaxPathSegments = 64

// ParsePath compiles a path such as $.a.b[0].c.
func ParsePath(s string) (*Path, error) {
	p := &Path{src: s}
	if !strings.HasPrefix(s, "$") {
		return nil, fmt.Errorf("%w %q: want $ first, as in $.id or $.items[0].id", ErrPath, s)
	}
	rest := s[1:]
	for rest != "" {
		if len(p.segs) == MaxPathSegments {
			return nil, fmt.Errorf("%w %q: more than %d segments", ErrPath, s, MaxPathSegments)
		}
		switch rest[0] {
		case '.':
			rest = rest[1:]
			n := strings.IndexAny(rest, ".[")
			if n < 0 {
				n = len(rest)
			}
			name := rest[:n]
			if name == "" {
				return nil, fmt.Errorf("%w %q: empty name after '.' (.. and .* are not supported)", ErrPath, s)
			}
			if name == "*" {
				return nil, fmt.Errorf("%w %q: wildcards are not supported: a capture names one value", ErrPath, s)
			}
			p.segs = append(p.segs, seg{key: name, index: -1})
			rest = rest[n:]
		case '[':
			end := strings.IndexByte(rest, ']')
			if len(rest) > 1 && (rest[1] == '\'' || rest[1] == '"') {
				q := rest[1]
				close := strings.IndexByte(rest[2:], q)
				if close < 0 || len(rest) < close+4 || rest[close+3] != ']' {
					return nil, fmt.Errorf("%w %q: unterminated ['name']", ErrPath, s)
				}
				p.segs = append(p.segs, seg{key: rest[2 : close+2], index: -1})
				rest = rest[close+4:]
				continue
			}
			if end < 0 {
				return nil, fmt.Errorf("%w %q: '[' without ']'", ErrPath, s)
			}
			in := rest[1:end]
			i, err := strconv.Atoi(in)
			if err != nil || i < 0 || in[0] == '+' {
				return nil, fmt.Errorf("%w %q: [%s]: want an index 0, 1, ... or ['name'] (no slices, filters or negative indexes)", ErrPath, s, in)
			}
			p.segs = append(p.segs, seg{index: i})
			rest = rest[end+1:]
		default:
			return nil, fmt.Errorf("%w %q: want . or [ after %q", ErrPath, s, s[:len(s)-len(rest)])
		}
	}
	return p, nil
}

// String is the path as written.
func (p *Path) String() string { return p.src }

// Find returns the raw JSON text of the value at p in doc (a string with
// its quotes), and whether it is there. It scans doc without decoding
// it: members and elements not on the path are skipped, checked only for
// their structure. A doc that is not JSON finds nothing.
func (p *Path) Find(doc []byte) ([]byte, bool) {
	s := scanner{b: doc}
	s.space()
	start := s.i
	for _, sg := range p.segs {
		var ok bool
		if sg.index >= 0 {
			ok = s.element(sg.index)
		} else {
			ok = s.member(sg.key)
		}
		if !ok {
			return nil, false
		}
		start = s.i
	}
	if !s.value() {
		return nil, false
	}
	return doc[start:s.i], true
}

// Text is a found value as a template variable: a string's contents
// unquoted (escapes decoded), any other value its JSON text (42, true,
// null, {"a":1}).
func Text(raw []byte) string {
	if len(raw) >= 2 && raw[0] == '"' {
		if bytes.IndexByte(raw, '\\') < 0 {
			return string(raw[1 : len(raw)-1])
		}
		if s, err := strconv.Unquote(string(raw)); err == nil && utf8.ValidString(s) {
			return s
		}
		return unescapeJSON(raw[1 : len(raw)-1])
	}
	return string(raw)
}

// unescapeJSON decodes JSON's escapes (strconv.Unquote refuses \/ and
// surrogate pairs as JSON writes them).
func unescapeJSON(b []byte) string {
	var sb strings.Builder
	for i := 0; i < len(b); i++ {
		c := b[i]
		if c != '\\' || i+1 == len(b) {
			sb.WriteByte(c)
			continue
		}
		i++
		switch b[i] {
		case 'b':
			sb.WriteByte('\b')
		case 'f':
			sb.WriteByte('\f')
		case 'n':
			sb.WriteByte('\n')
		case 'r':
			sb.WriteByte('\r')
		case 't':
			sb.WriteByte('\t')
		case 'u':
			if i+4 < len(b) {
				r, err := strconv.ParseUint(string(b[i+1:i+5]), 16, 32)
				if err == nil {
					i += 4
					if r >= 0xd800 && r < 0xdc00 && i+6 < len(b) && b[i+1] == '\\' && b[i+2] == 'u' {
						if lo, err := strconv.ParseUint(string(b[i+3:i+7]), 16, 32); err == nil && lo >= 0xdc00 && lo < 0xe000 {
							r = (r-0xd800)<<10 + (lo - 0xdc00) + 0x10000
							i += 6
						}
					}
					sb.WriteRune(rune(r))
					continue
				}
			}
			sb.WriteByte('u')
		default: // \" \\ \/
			sb.WriteByte(b[i])
		}
	}
	return sb.String()
}

// scanner walks JSON text; i is the next byte. Every method leaves i
// after what it consumed and reports false on anything not JSON.
type scanner struct {
	b     []byte
	i     int
	depth int
}

// maxDepth bounds nesting, so a body of a million '[' cannot exhaust the
// stack.
const maxDepth = 1000

func (s *scanner) space() {
	for s.i < len(s.b) {
		switch s.b[s.i] {
		case ' ', '\t', '\r', '\n':
			s.i++
		default:
			return
		}
	}
}

func (s *scanner) peek() byte {
	s.space()
	if s.i < len(s.b) {
		return s.b[s.i]
	}
	return 0
}

// member moves into the object at i to the value of key.
func (s *scanner) member(key string) bool {
	if s.peek() != '{' {
		return false
	}
	s.i++
	if s.peek() == '}' {
		return false
	}
	for {
		if s.peek() != '"' {
			return false
		}
		k0 := s.i
		if !s.str() {
			return false
		}
		match := keyEquals(s.b[k0:s.i], key)
		if s.peek() != ':' {
			return false
		}
		s.i++
		if match {
			s.space()
			return s.i < len(s.b)
		}
		if !s.value() {
			return false
		}
		switch s.peek() {
		case ',':
			s.i++
		default:
			return false // '}': not found, or not JSON
		}
	}
}

// keyEquals compares a quoted JSON key with a name.
func keyEquals(quoted []byte, key string) bool {
	in := quoted[1 : len(quoted)-1]
	if bytes.IndexByte(in, '\\') < 0 {
		return string(in) == key
	}
	return unescapeJSON(in) == key
}

// element moves into the array at i to its n-th element.
func (s *scanner) element(n int) bool {
	if s.peek() != '[' {
		return false
	}
	s.i++
	if s.peek() == ']' {
		return false
	}
	for k := 0; ; k++ {
		if k == n {
			s.space()
			return s.i < len(s.b)
		}
		if !s.value() {
			return false
		}
		if s.peek() != ',' {
			return false
		}
		s.i++
	}
}

// value skips one value.
func (s *scanner) value() bool {
	switch c := s.peek(); {
	case c == '"':
		return s.str()
	case c == '{' || c == '[':
		return s.container(c)
	case c == 't':
		return s.lit("true")
	case c == 'f':
		return s.lit("false")
	case c == 'n':
		return s.lit("null")
	case c == '-' || (c >= '0' && c <= '9'):
		return s.number()
	}
	return false
}

func (s *scanner) container(open byte) bool {
	if s.depth++; s.depth > maxDepth {
		return false
	}
	defer func() { s.depth-- }()
	close := byte(']')
	if open == '{' {
		close = '}'
	}
	s.i++
	if s.peek() == close {
		s.i++
		return true
	}
	for {
		if open == '{' {
			if s.peek() != '"' || !s.str() || s.peek() != ':' {
				return false
			}
			s.i++
		}
		if !s.value() {
			return false
		}
		switch s.peek() {
		case ',':
			s.i++
		case close:
			s.i++
			return true
		default:
			return false
		}
	}
}

func (s *scanner) str() bool {
	s.i++ // the opening quote
	for s.i < len(s.b) {
		switch c := s.b[s.i]; {
		case c == '"':
			s.i++
			return true
		case c == '\\':
			s.i += 2
		case c < 0x20:
			return false
		default:
			s.i++
		}
	}
	return false
}

func (s *scanner) lit(w string) bool {
	if !bytes.HasPrefix(s.b[s.i:], []byte(w)) {
		return false
	}
	s.i += len(w)
	return true
}

func (s *scanner) number() bool {
	i0 := s.i
	for s.i < len(s.b) {
		switch c := s.b[s.i]; {
		case c >= '0' && c <= '9', c == '-', c == '+', c == '.', c == 'e', c == 'E':
			s.i++
		default:
			return s.i > i0
		}
	}
	return s.i > i0
}
