package replay

import (
	"bufio"
	"errors"
	"fmt"
	"io"
)

// jsonScan walks a JSON document's structure a byte at a time, to cut
// it into values without holding any more of it than asked: a value is
// either skipped (nothing kept) or captured up to a bound (the rest
// skipped, the value marked too large). It checks structure only
// (brackets, strings, separators); what it captures, json.Unmarshal
// checks in full.
type jsonScan struct {
	br  *bufio.Reader
	off int64 // bytes read
}

var errJSONShape = errors.New("not JSON")

func (s *jsonScan) byte() (byte, error) {
	c, err := s.br.ReadByte()
	if err == nil {
		s.off++
	} else if errors.Is(err, io.EOF) {
		err = io.ErrUnexpectedEOF
	}
	return c, err
}

// peek returns the next byte that is not white space, unread.
func (s *jsonScan) peek() (byte, error) {
	for {
		c, err := s.byte()
		if err != nil {
			return 0, err
		}
		switch c {
		case ' ', '\t', '\r', '\n':
			continue
		}
		s.off--
		return c, s.br.UnreadByte()
	}
}

// expect reads the next non-space byte, which must be c.
func (s *jsonScan) expect(c byte) error {
	got, err := s.peek()
	if err != nil {
		return err
	}
	if got != c {
		return fmt.Errorf("%w: want %q at byte %d, got %q", errJSONShape, c, s.off, got)
	}
	_, err = s.byte()
	return err
}

// value reads one value. Its bytes are appended to *out while they fit
// in limit (out nil: none kept); over reports a value longer than limit,
// of which out then holds nothing.
func (s *jsonScan) value(out *[]byte, limit int) (over bool, err error) {
	if _, err := s.peek(); err != nil {
		return false, err
	}
	keep := func(c byte) {
		if out == nil || over {
			return
		}
		if len(*out) >= limit {
			over, *out = true, (*out)[:0]
			return
		}
		*out = append(*out, c)
	}
	depth := 0
	for {
		c, err := s.byte()
		if err != nil {
			return over, err
		}
		switch c {
		case '"':
			keep(c)
			if err := s.rest(keep); err != nil {
				return over, err
			}
		case '{', '[':
			keep(c)
			depth++
			continue
		case '}', ']':
			if depth == 0 {
				return over, fmt.Errorf("%w: %q at byte %d", errJSONShape, c, s.off)
			}
			keep(c)
			depth--
		case ',', ':':
			if depth == 0 {
				return over, fmt.Errorf("%w: %q at byte %d", errJSONShape, c, s.off)
			}
			keep(c)
			continue
		case ' ', '\t', '\r', '\n':
			continue
		default: // a number, true, false, null: up to a delimiter
			keep(c)
			for {
				d, err := s.br.Peek(1)
				if err != nil {
					if errors.Is(err, io.EOF) && depth == 0 {
						return over, nil
					}
					return over, err
				}
				if d[0] == ',' || d[0] == ']' || d[0] == '}' || d[0] == ':' || d[0] == ' ' || d[0] == '\t' || d[0] == '\r' || d[0] == '\n' || d[0] == '"' || d[0] == '{' || d[0] == '[' {
					break
				}
				b, _ := s.byte()
				keep(b)
			}
		}
		if depth == 0 {
			return over, nil
		}
	}
}

// rest reads a string's bytes after its opening quote, through its
// closing one.
func (s *jsonScan) rest(keep func(byte)) error {
	for {
		c, err := s.byte()
		if err != nil {
			return err
		}
		keep(c)
		switch c {
		case '\\':
			e, err := s.byte()
			if err != nil {
				return err
			}
			keep(e)
		case '"':
			return nil
		}
	}
}
