package bulk

import (
	"bufio"
	"errors"
	"fmt"
	"io"

	"github.com/wirebench/wirebench/toon"
)

// TOON: the root object's first array, normally the table
// airports[N]{iata_code,name,city,country}: with one row per line (a list
// of objects is read too). toon.Decoder.Next reads it a row at a time and
// checks N; lines over MaxRecord bytes are refused, so a line without an
// end cannot grow the decoder's line buffer.
type toonDecoder struct {
	d     *toon.Decoder
	index int
	err   error
}

func newTOONDecoder(r io.Reader) *toonDecoder {
	return &toonDecoder{d: toon.NewDecoder(&lineLimit{r: bufio.NewReaderSize(r, readBufSize), max: MaxRecord}, toon.UnmarshalOptions{})}
}

// lineLimit fails once a line runs past max bytes.
type lineLimit struct {
	r   *bufio.Reader
	run int
	max int
}

func (l *lineLimit) Read(p []byte) (int, error) {
	n, err := l.r.Read(p)
	for i, c := range p[:n] {
		if c == '\n' {
			l.run = 0
			continue
		}
		if l.run++; l.run > l.max {
			return i, errRecordTooLong
		}
	}
	return n, err
}

func (d *toonDecoder) Next(a *Airport) error {
	if d.err != nil {
		return d.err
	}
	*a = Airport{}
	if err := d.d.Next(a); err != nil {
		if err == io.EOF {
			d.err = io.EOF
			return io.EOF
		}
		if errors.Is(err, errRecordTooLong) {
			err = fmt.Errorf("%w: line over the limit of %d bytes", ErrSyntax, MaxRecord)
		} else {
			err = fmt.Errorf("%w: %v", ErrSyntax, err)
		}
		d.err = &RecordError{Index: d.index, Err: err}
		return d.err
	}
	if err := a.Validate(d.index); err != nil {
		d.err = err
		return err
	}
	d.index++
	return nil
}

type toonEncoder struct {
	w *bufio.Writer
	e *toon.Encoder // nil for an empty table
}

// emptyTable is an empty airports table with its header: toon.Encoder
// writes an empty table as "airports: []", which holds no field list.
const emptyTable = "airports[0]{iata_code,name,city,country}:\n"

func newTOONEncoder(w io.Writer, n int) (*toonEncoder, error) {
	bw := bufio.NewWriterSize(w, readBufSize)
	e := &toonEncoder{w: bw}
	if n == 0 {
		_, err := bw.WriteString(emptyTable)
		return e, err
	}
	e.e = toon.NewEncoder(bw, toon.MarshalOptions{})
	return e, e.e.BeginTable("airports", n, Fields)
}

func (e *toonEncoder) Write(a *Airport) error {
	if e.e == nil {
		return fmt.Errorf("toon: %w: a record past the announced count 0", ErrSyntax)
	}
	return e.e.Row(a)
}

func (e *toonEncoder) Close() error {
	if e.e != nil {
		if err := e.e.End(); err != nil {
			return err
		}
		e.w.WriteByte('\n') // a text file ends with one (the empty table has its own)
	}
	return e.w.Flush()
}
