package bulk

import (
	"bufio"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
)

// CSV (RFC 4180): a header line naming the four columns, in any order,
// then one record per line; quoted fields may hold commas, quotes ("")
// and newlines. A record over MaxRecord bytes is refused before it is read
// whole (encoding/csv would otherwise keep growing its line buffer).
type csvDecoder struct {
	cr    *csv.Reader
	lim   limitReader
	cols  [4]int // column of each field
	index int
	err   error
}

var errRecordTooLong = errors.New("record too long")

// limitReader fails a read that would take the bytes read since the last
// record's end (mark) past max.
type limitReader struct {
	r    io.Reader
	n    int64
	mark func() int64
	max  int64
}

func (l *limitReader) Read(p []byte) (int, error) {
	room := l.mark() + l.max - l.n
	if room <= 0 {
		return 0, errRecordTooLong
	}
	if int64(len(p)) > room {
		p = p[:room]
	}
	n, err := l.r.Read(p)
	l.n += int64(n)
	return n, err
}

func newCSVDecoder(r io.Reader) *csvDecoder {
	d := &csvDecoder{}
	d.lim = limitReader{r: r, max: MaxRecord + readBufSize}
	d.cr = csv.NewReader(bufio.NewReaderSize(&d.lim, readBufSize))
	d.lim.mark = d.cr.InputOffset
	d.cr.ReuseRecord = true
	d.cr.FieldsPerRecord = 4
	return d
}

func (d *csvDecoder) fail(field string, err error) error {
	if errors.Is(err, errRecordTooLong) {
		err = fmt.Errorf("%w: over the limit of %d bytes", ErrSyntax, MaxRecord)
	} else if !errors.Is(err, ErrSyntax) && !errors.Is(err, ErrInvalid) && !errors.Is(err, ErrMissing) {
		err = fmt.Errorf("%w: %v", ErrSyntax, err)
	}
	d.err = &RecordError{Index: d.index, Field: field, Err: err}
	return d.err
}

func (d *csvDecoder) header() error {
	h, err := d.cr.Read()
	if err != nil {
		if err == io.EOF {
			return d.fail("", fmt.Errorf("%w: empty body: want the header line %s", ErrSyntax, "iata_code,name,city,country"))
		}
		return d.fail("", fmt.Errorf("header: %w", err))
	}
	seen := [4]bool{}
	for col, name := range h {
		i := fieldIndex(name)
		if i < 0 || seen[i] {
			return d.fail("", fmt.Errorf("%w: header: column %d is %q, want each of iata_code, name, city, country once", ErrSyntax, col+1, name))
		}
		seen[i], d.cols[i] = true, col
	}
	return nil
}

func fieldIndex(name string) int {
	for i, f := range Fields {
		if f == name {
			return i
		}
	}
	return -1
}

func (d *csvDecoder) Next(a *Airport) error {
	if d.err != nil {
		return d.err
	}
	if d.index == 0 && d.cr.InputOffset() == 0 {
		if err := d.header(); err != nil {
			return err
		}
	}
	rec, err := d.cr.Read()
	if err == io.EOF {
		d.err = io.EOF
		return io.EOF
	}
	if err != nil {
		return d.fail("", err)
	}
	*a = Airport{IATACode: rec[d.cols[0]], Name: rec[d.cols[1]], City: rec[d.cols[2]], Country: rec[d.cols[3]]}
	if err := a.Validate(d.index); err != nil {
		d.err = err
		return err
	}
	d.index++
	return nil
}

type csvEncoder struct {
	w   *bufio.Writer
	cw  *csv.Writer
	rec [4]string
}

func newCSVEncoder(w io.Writer) (*csvEncoder, error) {
	bw := bufio.NewWriterSize(w, readBufSize)
	e := &csvEncoder{w: bw, cw: csv.NewWriter(bw)}
	return e, e.cw.Write(Fields)
}

func (e *csvEncoder) Write(a *Airport) error {
	e.rec = [4]string{a.IATACode, a.Name, a.City, a.Country}
	return e.cw.Write(e.rec[:])
}

func (e *csvEncoder) Close() error {
	e.cw.Flush()
	if err := e.cw.Error(); err != nil {
		return err
	}
	return e.w.Flush()
}
