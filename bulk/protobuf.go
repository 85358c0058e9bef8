package bulk

import (
	"bufio"
	"errors"
	"fmt"
	"io"

	"google.golang.org/protobuf/encoding/protowire"
)

// Length-delimited protobuf: each record is an Airport message prefixed by
// its length as a varint, the framing protodelim (Go) and
// writeDelimitedTo (Java) use:
//
//	+-----------------+---------------------------+-----------------+----
//	| varint length L | L bytes: message Airport  | varint length L | ...
//	+-----------------+---------------------------+-----------------+----
//
//	message Airport {          // bulk/airport.proto
//	  string iata_code = 1;
//	  string name = 2;
//	  string city = 3;
//	  string country = 4;
//	}
//
// The body ends at a message boundary. Unknown fields are skipped, a known
// field of the wrong wire type names the field, and a length over
// MaxRecord is refused before the message is read.
type pbDecoder struct {
	r     *bufio.Reader
	index int
	err   error
	buf   []byte
}

func newPBDecoder(r io.Reader) *pbDecoder {
	return &pbDecoder{r: bufio.NewReaderSize(r, readBufSize)}
}

func (d *pbDecoder) fail(field string, err error) error {
	d.err = &RecordError{Index: d.index, Field: field, Err: err}
	return d.err
}

func (d *pbDecoder) Next(a *Airport) error {
	if d.err != nil {
		return d.err
	}
	n, err := d.varint()
	if err == io.EOF {
		d.err = io.EOF
		return io.EOF
	}
	if err != nil {
		return d.fail("", err)
	}
	if n > MaxRecord {
		return d.fail("", fmt.Errorf("%w: message of %d bytes, over the limit of %d", ErrSyntax, n, MaxRecord))
	}
	if cap(d.buf) < int(n) {
		d.buf = make([]byte, n)
	}
	b := d.buf[:n]
	if _, err := io.ReadFull(d.r, b); err != nil {
		return d.fail("", fmt.Errorf("%w: message cut short: %v", ErrSyntax, err))
	}
	*a = Airport{}
	for len(b) > 0 {
		num, typ, m := protowire.ConsumeTag(b)
		if m < 0 {
			return d.fail("", fmt.Errorf("%w: %v", ErrSyntax, protowire.ParseError(m)))
		}
		b = b[m:]
		if num >= 1 && num <= 4 {
			name := Fields[num-1]
			if typ != protowire.BytesType {
				return d.fail(name, fmt.Errorf("%w: wire type %d, want a string", ErrInvalid, typ))
			}
			v, m := protowire.ConsumeBytes(b)
			if m < 0 {
				return d.fail(name, fmt.Errorf("%w: %v", ErrSyntax, protowire.ParseError(m)))
			}
			b = b[m:]
			*[4]*string{&a.IATACode, &a.Name, &a.City, &a.Country}[num-1] = string(v)
			continue
		}
		m = protowire.ConsumeFieldValue(num, typ, b)
		if m < 0 {
			return d.fail("", fmt.Errorf("%w: field %d: %v", ErrSyntax, num, protowire.ParseError(m)))
		}
		b = b[m:]
	}
	if err := a.Validate(d.index); err != nil {
		d.err = err
		return err
	}
	d.index++
	return nil
}

// varint reads a length prefix: io.EOF only before its first byte.
func (d *pbDecoder) varint() (uint64, error) {
	var x uint64
	for i := 0; ; i++ {
		c, err := d.r.ReadByte()
		if err != nil {
			if i == 0 && errors.Is(err, io.EOF) {
				return 0, io.EOF
			}
			return 0, fmt.Errorf("%w: length prefix cut short", ErrSyntax)
		}
		if i == 9 && c > 1 {
			return 0, fmt.Errorf("%w: length prefix overflows", ErrSyntax)
		}
		x |= uint64(c&0x7f) << (7 * i)
		if c < 0x80 {
			return x, nil
		}
	}
}

type pbEncoder struct {
	w *bufio.Writer
	b []byte
	m []byte
}

func newPBEncoder(w io.Writer) *pbEncoder {
	return &pbEncoder{w: bufio.NewWriterSize(w, readBufSize)}
}

func (e *pbEncoder) Write(a *Airport) error {
	m := e.m[:0]
	for i, v := range [4]string{a.IATACode, a.Name, a.City, a.Country} {
		m = protowire.AppendTag(m, protowire.Number(i+1), protowire.BytesType)
		m = protowire.AppendString(m, v)
	}
	b := protowire.AppendVarint(e.b[:0], uint64(len(m)))
	b = append(b, m...)
	e.m, e.b = m, b
	_, err := e.w.Write(b)
	return err
}

func (e *pbEncoder) Close() error { return e.w.Flush() }
