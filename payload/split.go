package payload

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
)

// splitter cuts a stream of JSON into samples without holding more than
// one sample: a top-level array gives its elements, anything else its
// top-level values (one document, JSON lines, or values one after the
// other). It finds where a value ends by tracking strings and nesting
// only; parseValue checks the value itself.
type splitter struct {
	br      *bufio.Reader
	max     int   // bytes of one sample
	off     int64 // bytes consumed
	line    int   // 1-based line of the next byte
	inArray bool  // reading the elements of a top-level array
	whole   bool  // a top-level array is one sample, not a list of them
	started bool
	done    bool
	buf     []byte
	// bytewise scans containers a byte at a time too: the reference
	// the tests compare value's fast path with.
	bytewise bool
}

func newSplitter(r io.Reader, maxSample int) *splitter {
	return &splitter{br: bufio.NewReaderSize(r, 64<<10), max: maxSample, line: 1}
}

// errTooLarge is a sample past the splitter's bound.
var errTooLarge = errors.New("sample too large")

func (s *splitter) readByte() (byte, error) {
	c, err := s.br.ReadByte()
	if err == nil {
		s.off++
		if c == '\n' {
			s.line++
		}
	}
	return c, err
}

func (s *splitter) unread() {
	_ = s.br.UnreadByte()
	s.off--
	if b, _ := s.br.Peek(1); len(b) == 1 && b[0] == '\n' {
		s.line--
	}
}

// skipWS skips whitespace (and a byte-order mark at the very start) and
// returns the next byte, unread.
func (s *splitter) skipWS() (byte, error) {
	if s.off == 0 {
		if b, _ := s.br.Peek(3); len(b) == 3 && b[0] == 0xef && b[1] == 0xbb && b[2] == 0xbf {
			_, _ = s.br.Discard(3)
			s.off += 3
		}
	}
	for {
		c, err := s.readByte()
		if err != nil {
			return 0, err
		}
		switch c {
		case ' ', '\t', '\r', '\n':
			continue
		}
		s.unread()
		return c, nil
	}
}

// next returns the raw bytes of the next sample (valid until the next
// call), the line it starts on and its byte offset, or io.EOF.
func (s *splitter) next() (raw []byte, line int, off int64, err error) {
	if s.done {
		return nil, 0, 0, io.EOF
	}
	c, err := s.skipWS()
	if !s.started {
		s.started = true
		if err == io.EOF {
			s.done = true
			return nil, 0, 0, fmt.Errorf("no JSON value in the input")
		}
		if err == nil && c == '[' && !s.whole {
			s.inArray = true
			_, _ = s.readByte()
			if c, err = s.skipWS(); err == nil && c == ']' {
				_, _ = s.readByte()
				s.done = true
				return s.trailing()
			}
		}
	} else if s.inArray {
		if err == nil {
			_, _ = s.readByte()
			switch c {
			case ']':
				s.done = true
				return s.trailing()
			case ',':
				_, err = s.skipWS()
			default:
				return nil, s.line, s.off - 1, fmt.Errorf("want ',' or ']' between the array's elements, got %s", quoteByte(c))
			}
		}
	}
	if err == io.EOF {
		s.done = true
		if s.inArray {
			return nil, s.line, s.off, fmt.Errorf("unexpected end of input in the top-level array")
		}
		return nil, 0, 0, io.EOF
	}
	if err != nil {
		return nil, s.line, s.off, err
	}
	line, off = s.line, s.off
	raw, err = s.value()
	return raw, line, off, err
}

// trailing checks that nothing but whitespace follows a top-level array.
func (s *splitter) trailing() ([]byte, int, int64, error) {
	c, err := s.skipWS()
	if err == io.EOF {
		return nil, 0, 0, io.EOF
	}
	if err != nil {
		return nil, s.line, s.off, err
	}
	return nil, s.line, s.off, fmt.Errorf("data after the top-level array: %s", quoteByte(c))
}

// value reads one value's bytes: a string, an object or array up to its
// closing bracket, or a scalar up to the next delimiter. It scans the
// reader's buffer in place, a chunk at a time: a call per byte was a
// fifth of a large file's reading.
func (s *splitter) value() ([]byte, error) {
	s.buf = s.buf[:0]
	depth, inStr, esc := 0, false, false
	var first byte // the value's first byte
	for {
		chunk, err := s.br.Peek(max(s.br.Buffered(), 1))
		if len(chunk) == 0 {
			if err == io.EOF {
				if depth == 0 && !inStr && len(s.buf) > 0 {
					return s.buf, nil // a scalar at the end of the input
				}
				return nil, fmt.Errorf("unexpected end of input in a sample")
			}
			return nil, err
		}
		n := len(s.buf) // bytes of the value before this chunk
		if n == 0 {
			first = chunk[0]
		}
		end, i := -1, 0 // end: the value's bytes in chunk, once it ended
		if (first == '{' || first == '[') && !s.bytewise {
			// An object or an array, the usual sample: it ends only at
			// its closing bracket, so the loop skips the bytes that do not
			// matter (a string's, the punctuation's) through tables and
			// checks the bound once a chunk, not once a byte.
			lim := min(len(chunk), s.max-n)
		container:
			for i < lim {
				if inStr {
					if esc {
						esc = false
						i++
						continue
					}
					for i < lim && strPlain[chunk[i]] {
						i++
					}
					if i == lim {
						break
					}
					if chunk[i] == '\\' {
						esc = true
					} else {
						inStr = false
					}
					i++
					continue
				}
				for i < lim && outPlain[chunk[i]] {
					i++
				}
				if i == lim {
					break
				}
				switch chunk[i] {
				case '"':
					inStr = true
				case '{', '[':
					depth++
				default: // '}', ']'
					depth--
					if depth <= 0 {
						end = i + 1
						break container
					}
				}
				i++
			}
			if end < 0 && lim < len(chunk) {
				s.buf = append(s.buf, chunk[:lim]...) // for the caller to find a syntax error in
				s.consume(chunk[:lim+1])              // up to the byte past the bound, as a byte-at-a-time read
				return nil, fmt.Errorf("%w: longer than %d bytes", errTooLarge, s.max)
			}
		} else {
			i = s.scalarOrString(chunk, n, first, &depth, &inStr, &esc, &end)
			if i < 0 {
				return nil, fmt.Errorf("%w: longer than %d bytes", errTooLarge, s.max)
			}
		}
		if end < 0 {
			end = len(chunk)
		}
		s.buf = append(s.buf, chunk[:end]...)
		s.consume(chunk[:end])
		if end < len(chunk) || i < len(chunk) {
			return s.buf, nil
		}
	}
}

// strPlain and outPlain are the bytes value skips in a string and out of
// one: all but those that end a string or an escape, and all but quotes
// and brackets.
var strPlain, outPlain = func() (in, out [256]bool) {
	for c := range 256 {
		in[c] = c != '"' && c != '\\'
		out[c] = c != '"' && c != '{' && c != '[' && c != '}' && c != ']'
	}
	return in, out
}()

// scalarOrString is value's byte-at-a-time scan of a chunk of a sample
// that does not start with a bracket (a top-level string or scalar, rare):
// it returns the index it stopped at and sets end once the value ended,
// or returns -1 past the bound (the bytes up to it consumed).
func (s *splitter) scalarOrString(chunk []byte, n int, first byte, depth *int, inStr, esc *bool, end *int) int {
	i := 0
scan:
	for ; i < len(chunk); i++ {
		c := chunk[i]
		if !*inStr && *depth == 0 && n+i > 0 && first != '"' {
			switch c {
			case ' ', '\t', '\r', '\n', ',', ']', '[', '{', '"':
				*end = i // the end of a scalar, c not consumed
				break scan
			}
		}
		if n+i >= s.max {
			s.consume(chunk[:i+1]) // up to the byte past the bound, as a byte-at-a-time read
			return -1
		}
		switch {
		case *inStr:
			switch {
			case *esc:
				*esc = false
			case c == '\\':
				*esc = true
			case c == '"':
				*inStr = false
				if *depth == 0 {
					*end = i + 1
					break scan
				}
			}
		case c == '"':
			*inStr = true
		case c == '{' || c == '[':
			*depth++
		case c == '}' || c == ']':
			*depth--
			if *depth <= 0 {
				*end = i + 1
				break scan
			}
		}
	}
	return i
}

// consume moves past part, the next bytes of the reader's buffer.
func (s *splitter) consume(part []byte) {
	s.off += int64(len(part))
	s.line += bytes.Count(part, []byte{'\n'})
	_, _ = s.br.Discard(len(part))
}
