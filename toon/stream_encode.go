package toon

import (
	"bufio"
	"fmt"
	"io"
	"reflect"
)

// Encoder writes TOON to a stream. Besides whole documents (Encode) it
// writes tables row by row, for data too large to hold in memory: TOON
// declares a table's length in its header, so the row count must be known
// before the first row.
//
//	enc := toon.NewEncoder(w, toon.MarshalOptions{})
//	enc.BeginTable("airports", len(ids), []string{"name", "city", "country", "iata_code"})
//	for ... { enc.Row(airport) }
//	err := enc.End()
//
// Several tables may follow one another; each becomes a field of the root
// object. An empty key makes the table the root array, which must then be
// the only thing written. An Encoder is not safe for concurrent use.
type Encoder struct {
	w    *bufio.Writer
	opts MarshalOptions
	err  error
	buf  []byte
	// table state
	inTable  bool
	rootArr  bool
	wrote    bool
	want     int
	got      int
	fields   []string
	rowType  reflect.Type
	rowCells []streamCell
}

type streamCell struct {
	index  []int      // nil: no such struct field, written as null
	scalar scalarFunc // nil: normalize the value
}

// NewEncoder returns an Encoder writing to w with opts.
func NewEncoder(w io.Writer, opts MarshalOptions) *Encoder {
	e := &Encoder{w: bufio.NewWriterSize(w, 32<<10)}
	e.opts, e.err = opts.normalized()
	return e
}

// Encode writes v as a complete document and flushes. It cannot be
// combined with tables or other documents: TOON has no document separator.
func (e *Encoder) Encode(v any) error {
	if e.err != nil {
		return e.err
	}
	if e.wrote || e.inTable {
		return e.fail(fmt.Errorf("toon: %w: Encode after other output", ErrStream))
	}
	buf, err := e.opts.Append(e.buf[:0], v)
	if err != nil {
		return err
	}
	e.buf = buf
	e.wrote = true
	if _, err := e.w.Write(buf); err != nil {
		return e.fail(err)
	}
	return e.fail(e.w.Flush())
}

func (e *Encoder) fail(err error) error {
	if err != nil && e.err == nil {
		e.err = err
	}
	return err
}

// BeginTable writes the header of a table of n rows with the given
// columns. key is the table's field name in the root object, or "" for a
// root array. For n == 0 it writes an empty array and End must follow.
func (e *Encoder) BeginTable(key string, n int, fields []string) error {
	if e.err != nil {
		return e.err
	}
	switch {
	case e.inTable:
		return e.fail(fmt.Errorf("toon: %w: BeginTable inside a table", ErrStream))
	case e.rootArr || (key == "" && e.wrote):
		return e.fail(fmt.Errorf("toon: %w: a root table must be the whole document", ErrStream))
	case n < 0 || len(fields) == 0:
		return e.fail(fmt.Errorf("toon: %w: a table needs n >= 0 and at least one field", ErrStream))
	}
	b := e.buf[:0]
	if e.wrote {
		b = append(b, '\n')
	}
	var k *string
	if key != "" {
		k = &key
	}
	if n == 0 {
		if k != nil {
			b = appendKey(b, key)
			b = append(b, ':', ' ')
		}
		b = append(b, '[', ']')
	} else {
		fl := make([]field, len(fields))
		for i, f := range fields {
			fl[i] = field{name: f}
		}
		b = appendHeader(b, k, n, fl, false, e.opts.Delimiter)
	}
	e.buf = b
	e.inTable, e.rootArr, e.wrote = true, key == "", true
	e.want, e.got = n, 0
	e.fields = append(e.fields[:0], fields...)
	e.rowType = nil
	return e.write()
}

func (e *Encoder) write() error {
	_, err := e.w.Write(e.buf)
	return e.fail(err)
}

// Row writes one row: a struct (or pointer to one) whose fields are
// matched to the columns by name, an Object or map[string]any, or a []any
// of cells in column order. Cells must be primitives.
func (e *Encoder) Row(v any) error {
	if e.err != nil {
		return e.err
	}
	if !e.inTable {
		return e.fail(fmt.Errorf("toon: %w: Row outside a table", ErrStream))
	}
	if e.got == e.want {
		return e.fail(fmt.Errorf("toon: %w: more than the %d rows declared", ErrCount, e.want))
	}
	b := append(e.buf[:0], '\n')
	for i := e.opts.Indent; i > 0; i-- {
		b = append(b, ' ')
	}
	b, err := e.appendRow(b, v)
	if err != nil {
		return e.fail(err)
	}
	e.buf = b
	e.got++
	return e.write()
}

func (e *Encoder) appendRow(b []byte, v any) ([]byte, error) {
	d := e.opts.Delimiter
	switch r := v.(type) {
	case []any:
		if len(r) != len(e.fields) {
			return b, fmt.Errorf("toon: %w: row has %d cells, table has %d fields", ErrCount, len(r), len(e.fields))
		}
		for i, c := range r {
			if i > 0 {
				b = append(b, byte(d))
			}
			var err error
			if b, err = e.appendCell(b, reflect.ValueOf(c)); err != nil {
				return b, err
			}
		}
		return b, nil
	case Object, map[string]any:
		for i, f := range e.fields {
			if i > 0 {
				b = append(b, byte(d))
			}
			var c any
			if o, ok := r.(Object); ok {
				c, _ = o.Get(f)
			} else {
				c = r.(map[string]any)[f]
			}
			var err error
			if b, err = e.appendCell(b, reflect.ValueOf(c)); err != nil {
				return b, err
			}
		}
		return b, nil
	}
	rv := reflect.ValueOf(v)
	for rv.Kind() == reflect.Pointer && !rv.IsNil() {
		rv = rv.Elem()
	}
	if rv.Kind() != reflect.Struct {
		return b, fmt.Errorf("toon: %w: Row needs a struct, Object, map[string]any or []any, got %T", ErrType, v)
	}
	if rv.Type() != e.rowType {
		e.planRow(rv.Type())
	}
	for i, c := range e.rowCells {
		if i > 0 {
			b = append(b, byte(d))
		}
		if c.index == nil {
			b = append(b, "null"...)
			continue
		}
		fv := fieldByIndex(rv, c.index)
		var err error
		if c.scalar != nil {
			b, err = c.scalar(b, fv, d)
		} else {
			b, err = e.appendCell(b, fv)
		}
		if err != nil {
			return b, err
		}
	}
	return b, nil
}

func (e *Encoder) planRow(t reflect.Type) {
	si := cachedStruct(t)
	e.rowType = t
	e.rowCells = e.rowCells[:0]
	for _, f := range e.fields {
		c := streamCell{}
		if i := si.find(f); i >= 0 {
			c.index = si.fields[i].index
			c.scalar = scalarFor(si.fields[i].typ)
		}
		e.rowCells = append(e.rowCells, c)
	}
}

// appendCell writes any value that normalizes to a primitive.
func (e *Encoder) appendCell(b []byte, v reflect.Value) ([]byte, error) {
	n := normalizer{maxDepth: e.opts.MaxDepth}
	x, err := n.value(v, 0)
	if err != nil {
		return b, err
	}
	if !isPrimitive(x) {
		return b, fmt.Errorf("toon: %w: table cell of type %s is not a primitive", ErrType, v.Type())
	}
	return appendPrimitive(b, x, e.opts.Delimiter), nil
}

// End finishes the table, failing with ErrCount if fewer rows were
// written than declared, and flushes.
func (e *Encoder) End() error {
	if e.err != nil {
		return e.err
	}
	if !e.inTable {
		return e.fail(fmt.Errorf("toon: %w: End outside a table", ErrStream))
	}
	e.inTable = false
	if e.got != e.want {
		return e.fail(fmt.Errorf("toon: %w: table declared %d rows, %d written", ErrCount, e.want, e.got))
	}
	return e.fail(e.w.Flush())
}
