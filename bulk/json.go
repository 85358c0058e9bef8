package bulk

import (
	"bufio"
	"fmt"
	"io"
	"unicode/utf16"
	"unicode/utf8"
)

// readBufSize is every decoder's read buffer: big enough that a record
// rarely straddles two reads, small next to the 20 MB the bulk path aims
// to stay under.
const readBufSize = 32 << 10

// maxSkipDepth bounds nesting inside an unknown field's value, which is
// skipped without being kept.
const maxSkipDepth = 64

// jsonDecoder reads a JSON array of objects (array) or a whitespace-
// separated sequence of objects (NDJSON). It is a byte scanner over a
// fixed buffer: strings are the only values kept, and only those of the
// four known fields; other fields' values are checked and skipped.
//
// The four kept values of a record are gathered in rec and become one
// string, which the record's fields share (one allocation per record, not
// four).
type jsonDecoder struct {
	r     *scanReader
	array bool
	state int // 0 before '[', 1 inside, 2 after the last record
	index int
	err   error
	buf   []byte // the string being read
	rec   []byte // the record's kept values, back to back
	span  [4][2]int
}

func newJSONDecoder(r io.Reader, array bool) *jsonDecoder {
	return &jsonDecoder{array: array, buf: make([]byte, 0, 256), rec: make([]byte, 0, 256), r: newScanReader(r, readBufSize)}
}

// offset is the body offset of the next unread byte.
func (d *jsonDecoder) offset() int64 { return d.r.offset() }

func (d *jsonDecoder) fail(field string, format string, args ...any) error {
	d.err = &RecordError{Index: d.index, Field: field,
		Err: fmt.Errorf("%w: offset %d: %s", ErrSyntax, d.offset(), fmt.Sprintf(format, args...))}
	return d.err
}

func (d *jsonDecoder) Next(a *Airport) error {
	if d.err != nil {
		return d.err
	}
	c, err := d.skipSpace()
	if d.array {
		switch {
		case d.state == 0:
			if err != nil || c != '[' {
				return d.fail("", "want '[' at the start of the array")
			}
			d.r.Discard(1)
			d.state = 1
			if c, err = d.skipSpace(); err == nil && c == ']' {
				d.r.Discard(1)
				return d.end()
			}
		case d.state == 2:
			return io.EOF
		default:
			if err != nil {
				return d.fail("", "unexpected end of body inside the array")
			}
			if c == ']' {
				d.r.Discard(1)
				return d.end()
			}
			if c != ',' {
				return d.fail("", "want ',' or ']' after a record, got %q", c)
			}
			d.r.Discard(1)
			c, err = d.skipSpace()
		}
	} else if err == io.EOF {
		d.err = io.EOF
		return io.EOF
	}
	if err != nil {
		return d.fail("", "unexpected end of body: want a record")
	}
	if c != '{' {
		return d.fail("", "want '{' at the start of a record, got %q", c)
	}
	d.r.Discard(1)
	if err := d.object(a); err != nil {
		return err
	}
	// str has checked UTF-8 already.
	if err := a.validate(d.index, false); err != nil {
		d.err = err
		return err
	}
	d.index++
	return nil
}

// end checks that only whitespace follows the array.
func (d *jsonDecoder) end() error {
	d.state = 2
	if _, err := d.skipSpace(); err != io.EOF {
		return d.fail("", "data after the array")
	}
	d.err = io.EOF
	return io.EOF
}

// object reads the members of a record after its '{'.
func (d *jsonDecoder) object(a *Airport) error {
	*a = Airport{}
	d.rec = d.rec[:0]
	var seen [4]bool
	c, err := d.skipSpace()
	if err == nil && c == '}' {
		d.r.Discard(1)
		return d.missing(seen)
	}
	for {
		if err != nil || c != '"' {
			return d.fail("", "want a field name")
		}
		d.r.Discard(1)
		key, long, kerr := d.str(MaxKey)
		if kerr != nil {
			return d.fail("", "field name: %v", kerr)
		}
		f, name := -1, ""
		if !long {
			if f = fieldOf(key); f >= 0 {
				name = Fields[f]
				seen[f] = true
			}
		}
		if c, err = d.skipSpace(); err != nil || c != ':' {
			return d.fail(name, "want ':' after the field name")
		}
		d.r.Discard(1)
		if c, err = d.skipSpace(); err != nil {
			return d.fail(name, "want a value")
		}
		if f >= 0 {
			if c != '"' {
				d.err = &RecordError{Index: d.index, Field: name, Err: fmt.Errorf("%w: want a string", ErrInvalid)}
				return d.err
			}
			d.r.Discard(1)
			max := MaxText
			if f == 0 {
				max = MaxKey
			}
			v, long, err := d.str(max)
			if err != nil {
				return d.fail(name, "%v", err)
			}
			if long {
				d.err = &RecordError{Index: d.index, Field: name, Err: fmt.Errorf("%w: over the limit of %d bytes", ErrInvalid, max)}
				return d.err
			}
			// A repeated field's last value wins (as in encoding/json);
			// the earlier one stays in rec, unreferenced.
			d.span[f] = [2]int{len(d.rec), len(d.rec) + len(v)}
			d.rec = append(d.rec, v...)
		} else if err := d.skip(0); err != nil {
			return d.fail("", "%v", err)
		}
		if c, err = d.skipSpace(); err != nil {
			return d.fail("", "unexpected end of body inside a record")
		}
		d.r.Discard(1)
		if c == '}' {
			if err := d.missing(seen); err != nil {
				return err
			}
			s := string(d.rec)
			a.IATACode, a.Name = s[d.span[0][0]:d.span[0][1]], s[d.span[1][0]:d.span[1][1]]
			a.City, a.Country = s[d.span[2][0]:d.span[2][1]], s[d.span[3][0]:d.span[3][1]]
			return nil
		}
		if c != ',' {
			return d.fail("", "want ',' or '}' after a field, got %q", c)
		}
		c, err = d.skipSpace()
	}
}

func (d *jsonDecoder) missing(seen [4]bool) error {
	for i, ok := range seen {
		if !ok {
			d.err = &RecordError{Index: d.index, Field: Fields[i], Err: ErrMissing}
			return d.err
		}
	}
	return nil
}

// skipSpace discards whitespace and peeks at the next byte, scanning the
// read buffer in place rather than a byte per call.
func (d *jsonDecoder) skipSpace() (byte, error) {
	for {
		buf, err := d.r.avail()
		if len(buf) == 0 {
			return 0, err
		}
		i := 0
		for i < len(buf) && (buf[i] == ' ' || buf[i] == '\n' || buf[i] == '\r' || buf[i] == '\t') {
			i++
		}
		d.r.Discard(i)
		if i < len(buf) {
			return buf[i], nil
		}
	}
}

// str reads a string's contents after its opening quote into d.buf,
// keeping at most max bytes (long reports that more followed; the rest is
// still checked and consumed). Every raw byte is checked as UTF-8, kept or
// not; escapes only ever add valid UTF-8.
func (d *jsonDecoder) str(limit int) (s []byte, long bool, err error) {
	d.buf = d.buf[:0]
	for {
		chunk, _ := d.r.avail()
		if len(chunk) == 0 {
			return nil, false, io.ErrUnexpectedEOF
		}
		i := 0
		var high byte // the OR of the raw bytes: < 0x80 if all are ASCII
		for i < len(chunk) && chunk[i] != '"' && chunk[i] != '\\' && chunk[i] >= 0x20 {
			high |= chunk[i]
			i++
		}
		seg := chunk[:i]
		if high >= 0x80 {
			if i == len(chunk) {
				// A rune cut by the end of the buffer is checked whole
				// with the next read.
				seg = seg[:completeRunes(seg)]
			}
			if !utf8.Valid(seg) {
				return nil, false, fmt.Errorf("string is not valid UTF-8")
			}
		}
		d.keep(seg, limit)
		d.r.Discard(len(seg))
		if len(seg) < i {
			if p, _ := d.r.Peek(i - len(seg) + 1); len(p) <= i-len(seg) {
				return nil, false, io.ErrUnexpectedEOF
			}
			continue
		}
		if i == len(chunk) {
			continue
		}
		c := chunk[i]
		d.r.Discard(1)
		switch {
		case c == '"':
			return d.buf, len(d.buf) > limit, nil
		case c < 0x20:
			return nil, false, fmt.Errorf("control character %#x in a string", c)
		}
		r, err := d.escape()
		if err != nil {
			return nil, false, err
		}
		var u [4]byte
		d.keep(u[:utf8.EncodeRune(u[:], r)], limit)
	}
}

// completeRunes is the length of b without a trailing incomplete UTF-8
// sequence (one that more bytes could complete).
func completeRunes(b []byte) int {
	for k := 1; k < utf8.UTFMax && k <= len(b); k++ {
		if utf8.RuneStart(b[len(b)-k]) {
			if utf8.FullRune(b[len(b)-k:]) {
				return len(b)
			}
			return len(b) - k
		}
	}
	return len(b)
}

// keep appends b to d.buf up to one byte past max (enough to know it is
// too long), so a long string costs no memory.
func (d *jsonDecoder) keep(b []byte, limit int) {
	if room := limit + 1 - len(d.buf); room > 0 {
		d.buf = append(d.buf, b[:min(len(b), room)]...)
	}
}

// escape reads an escape sequence after its backslash.
func (d *jsonDecoder) escape() (rune, error) {
	c, err := d.r.ReadByte()
	if err != nil {
		return 0, io.ErrUnexpectedEOF
	}
	switch c {
	case '"', '\\', '/':
		return rune(c), nil
	case 'b':
		return '\b', nil
	case 'f':
		return '\f', nil
	case 'n':
		return '\n', nil
	case 'r':
		return '\r', nil
	case 't':
		return '\t', nil
	case 'u':
		r, err := d.hex4()
		if err != nil {
			return 0, err
		}
		if utf16.IsSurrogate(r) {
			// A high surrogate must be followed by \u and a low one.
			if b, _ := d.r.Peek(2); len(b) == 2 && b[0] == '\\' && b[1] == 'u' {
				d.r.Discard(2)
				r2, err := d.hex4()
				if err != nil {
					return 0, err
				}
				if dec := utf16.DecodeRune(r, r2); dec != utf8.RuneError {
					return dec, nil
				}
			}
			return 0, fmt.Errorf("unpaired surrogate \\u%04x", r)
		}
		return r, nil
	}
	return 0, fmt.Errorf("bad escape \\%c", c)
}

func (d *jsonDecoder) hex4() (rune, error) {
	var r rune
	for range 4 {
		c, err := d.r.ReadByte()
		if err != nil {
			return 0, io.ErrUnexpectedEOF
		}
		switch {
		case '0' <= c && c <= '9':
			c -= '0'
		case 'a' <= c && c <= 'f':
			c -= 'a' - 10
		case 'A' <= c && c <= 'F':
			c -= 'A' - 10
		default:
			return 0, fmt.Errorf("bad \\u escape")
		}
		r = r<<4 | rune(c)
	}
	return r, nil
}

// skip checks and discards one value of an unknown field.
func (d *jsonDecoder) skip(depth int) error {
	if depth > maxSkipDepth {
		return fmt.Errorf("nesting deeper than %d", maxSkipDepth)
	}
	c, err := d.skipSpace()
	if err != nil {
		return io.ErrUnexpectedEOF
	}
	switch {
	case c == '"':
		d.r.Discard(1)
		_, _, err := d.str(0)
		return err
	case c == '{' || c == '[':
		d.r.Discard(1)
		closer := byte('}')
		if c == '[' {
			closer = ']'
		}
		if c, err := d.skipSpace(); err == nil && c == closer {
			d.r.Discard(1)
			return nil
		}
		for {
			if closer == '}' {
				if c, err := d.skipSpace(); err != nil || c != '"' {
					return fmt.Errorf("want a field name")
				}
				d.r.Discard(1)
				if _, _, err := d.str(0); err != nil {
					return err
				}
				if c, err := d.skipSpace(); err != nil || c != ':' {
					return fmt.Errorf("want ':'")
				}
				d.r.Discard(1)
			}
			if err := d.skip(depth + 1); err != nil {
				return err
			}
			c, err := d.skipSpace()
			if err != nil {
				return io.ErrUnexpectedEOF
			}
			d.r.Discard(1)
			if c == closer {
				return nil
			}
			if c != ',' {
				return fmt.Errorf("want ',' or %q, got %q", closer, c)
			}
		}
	case c == 't' || c == 'f' || c == 'n':
		for _, lit := range []string{"true", "false", "null"} {
			if lit[0] == c {
				b, _ := d.r.Peek(len(lit))
				if string(b) != lit {
					return fmt.Errorf("bad literal")
				}
				d.r.Discard(len(lit))
				return nil
			}
		}
	case c == '-' || ('0' <= c && c <= '9'):
		return d.number()
	}
	return fmt.Errorf("unexpected %q", c)
}

// number checks and discards a number: -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?
func (d *jsonDecoder) number() error {
	peek := func() byte {
		b, err := d.r.Peek(1)
		if err != nil {
			return 0
		}
		return b[0]
	}
	digits := func() int {
		n := 0
		for c := peek(); '0' <= c && c <= '9'; c = peek() {
			d.r.Discard(1)
			n++
		}
		return n
	}
	if peek() == '-' {
		d.r.Discard(1)
	}
	if peek() == '0' {
		d.r.Discard(1)
	} else if digits() == 0 {
		return fmt.Errorf("bad number")
	}
	if peek() == '.' {
		d.r.Discard(1)
		if digits() == 0 {
			return fmt.Errorf("bad number")
		}
	}
	if c := peek(); c == 'e' || c == 'E' {
		d.r.Discard(1)
		if c := peek(); c == '+' || c == '-' {
			d.r.Discard(1)
		}
		if digits() == 0 {
			return fmt.Errorf("bad number")
		}
	}
	return nil
}

// jsonEncoder writes a JSON array (or NDJSON) one record at a time.
type jsonEncoder struct {
	w     *bufio.Writer
	array bool
	n     int
	b     []byte
}

func newJSONEncoder(w io.Writer, array bool) *jsonEncoder {
	return &jsonEncoder{w: bufio.NewWriterSize(w, readBufSize), array: array}
}

func (e *jsonEncoder) Write(a *Airport) error {
	b := e.b[:0]
	if e.array {
		if e.n == 0 {
			b = append(b, '[')
		} else {
			b = append(b, ',')
		}
		b = append(b, '\n')
	}
	b = append(b, `{"iata_code":`...)
	b = appendJSONString(b, a.IATACode)
	b = append(b, `,"name":`...)
	b = appendJSONString(b, a.Name)
	b = append(b, `,"city":`...)
	b = appendJSONString(b, a.City)
	b = append(b, `,"country":`...)
	b = appendJSONString(b, a.Country)
	b = append(b, '}')
	if !e.array {
		b = append(b, '\n')
	}
	e.b = b
	e.n++
	_, err := e.w.Write(b)
	return err
}

func (e *jsonEncoder) Close() error {
	if e.array {
		if e.n == 0 {
			e.w.WriteString("[]\n")
		} else {
			e.w.WriteString("\n]\n")
		}
	}
	return e.w.Flush()
}

func appendJSONString(b []byte, s string) []byte {
	const hex = "0123456789abcdef"
	b = append(b, '"')
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '"' || c == '\\':
			b = append(b, '\\', c)
		case c < 0x20:
			b = append(b, '\\', 'u', '0', '0', hex[c>>4], hex[c&15])
		default:
			b = append(b, c)
		}
	}
	return append(b, '"')
}
