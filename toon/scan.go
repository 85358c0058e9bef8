package toon

import (
	"bufio"
	"errors"
	"io"
	"strings"
	"unsafe"
)

// line is one non-comment, non-blank line of a document.
type line struct {
	content string // after the indentation, trailing spaces removed
	indent  int    // bytes of indentation before content
	depth   int
	num     int // 1-based line number
	// blank is the number of the first blank line between this line and
	// the previous non-blank one, or 0. Strict mode rejects blank lines
	// inside array spans (spec §12).
	blank int
}

// col returns the 1-based column of byte offset off within content.
func (l *line) col(off int) int { return l.indent + off + 1 }

// lineSource yields raw lines without their '\n'. A returned string stays
// valid until the second-next call, which is what one line of look-ahead
// plus the current line need.
type lineSource interface {
	next() (raw string, ok bool, err error)
}

// stringSource splits an in-memory document. Its lines are views into the
// input, valid for the whole decode.
type stringSource struct {
	s    string
	pos  int
	done bool
}

func (s *stringSource) next() (string, bool, error) {
	if s.done {
		return "", false, nil
	}
	rest := s.s[s.pos:]
	if i := strings.IndexByte(rest, '\n'); i >= 0 {
		s.pos += i + 1
		return rest[:i], true, nil
	}
	s.done = true
	return rest, true, nil
}

// readerSource reads lines from an io.Reader into two alternating buffers,
// so memory is bounded by the longest line whatever the document's size.
type readerSource struct {
	r    *bufio.Reader
	bufs [2][]byte
	turn int
	done bool
}

func newReaderSource(r io.Reader) *readerSource {
	return &readerSource{r: bufio.NewReaderSize(r, 64<<10)}
}

func (s *readerSource) next() (string, bool, error) {
	if s.done {
		return "", false, nil
	}
	s.turn ^= 1
	buf := s.bufs[s.turn][:0]
	for {
		chunk, err := s.r.ReadSlice('\n')
		buf = append(buf, chunk...)
		if err == nil {
			buf = buf[:len(buf)-1]
			break
		}
		if errors.Is(err, bufio.ErrBufferFull) {
			continue
		}
		if err == io.EOF {
			s.done = true
			break
		}
		return "", false, err
	}
	s.bufs[s.turn] = buf
	return unsafe.String(unsafe.SliceData(buf), len(buf)), true, nil
}

// scanner turns raw lines into lines: it strips a BOM and CRs, removes
// comment lines (spec §5.1), measures indentation and enforces the strict
// indentation and UTF-8 rules, and offers one line of look-ahead.
type scanner struct {
	src    lineSource
	indent int
	strict bool
	// validated says the whole input is known to be valid UTF-8, so lines
	// need no check of their own.
	validated bool
	num       int
	blank     int
	peeked    line
	hasPeek   bool
	eof       bool
}

// peek returns the next line without consuming it, or nil at the end.
func (s *scanner) peek() (*line, error) {
	if s.hasPeek {
		return &s.peeked, nil
	}
	if s.eof {
		return nil, nil
	}
	for {
		raw, ok, err := s.src.next()
		if err != nil {
			return nil, err
		}
		if !ok {
			s.eof = true
			return nil, nil
		}
		s.num++
		if s.num == 1 && len(raw) >= 3 && raw[:3] == "\uFEFF" {
			raw = raw[3:]
		}
		if n := len(raw); n > 0 && raw[n-1] == '\r' {
			raw = raw[:n-1]
		}
		if s.strict && !s.validated && !validUTF8(raw) {
			return nil, errorf(ErrSyntax, s.num, 0, "invalid UTF-8")
		}
		// Leading whitespace: spaces, and tabs that strict mode rejects.
		lead, firstTab, tabs := 0, -1, 0
		for lead < len(raw) && (raw[lead] == ' ' || raw[lead] == '\t') {
			if raw[lead] == '\t' {
				if firstTab < 0 {
					firstTab = lead
				}
				tabs++
			}
			lead++
		}
		indent := lead
		if s.strict && firstTab >= 0 {
			indent = firstTab
		}
		content := raw[indent:]
		end := len(content)
		for end > 0 && content[end-1] == ' ' {
			end--
		}
		content = content[:end]
		if firstTab < 0 && len(content) > 0 && content[0] == '#' {
			continue // comment line
		}
		if content == "" {
			if s.blank == 0 {
				s.blank = s.num
			}
			continue
		}
		var depth int
		if s.strict {
			if firstTab >= 0 {
				return nil, errorf(ErrSyntax, s.num, firstTab+1, "tab in indentation")
			}
			if s.indent == 2 { // the default: a shift, not a division
				depth = indent >> 1
			} else {
				depth = indent / s.indent
			}
			if depth*s.indent != indent {
				return nil, errorf(ErrSyntax, s.num, indent+1, "indentation of %d spaces is not a multiple of %d", indent, s.indent)
			}
		} else {
			// Lenient: each tab is one level; spaces round down.
			depth = (indent-tabs)/s.indent + tabs
		}
		s.peeked = line{content: content, indent: indent, depth: depth, num: s.num, blank: s.blank}
		s.blank = 0
		s.hasPeek = true
		return &s.peeked, nil
	}
}

// next consumes the next line; the returned value is a copy that stays
// valid after further peeks.
func (s *scanner) next() (line, bool, error) {
	l, err := s.peek()
	if err != nil || l == nil {
		return line{}, false, err
	}
	s.hasPeek = false
	return *l, true, nil
}
