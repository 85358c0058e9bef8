package toon

import (
	"reflect"
	"strconv"
	"unsafe"
)

func appendUint(dst []byte, n uint64) []byte { return strconv.AppendUint(dst, n, 10) }

// writer appends the layouts whose shape is known from the Go type alone
// (see kindObject, kindTable, kindInline) without building generic values.
type writer struct {
	buf    []byte
	indent int
	delim  Delimiter
	start  int // where this document began in buf: no newline before it
}

func (w *writer) newLine(depth int) {
	if len(w.buf) > w.start {
		w.buf = append(w.buf, '\n')
	}
	for i := depth * w.indent; i > 0; i-- {
		w.buf = append(w.buf, ' ')
	}
}

// object writes a kindObject struct's fields at depth.
func (w *writer) object(te *typeEncoder, v reflect.Value, depth int) error {
	var err error
	base := v.Addr().UnsafePointer()
	for i := range te.fields {
		f := &te.fields[i]
		if f.omitEmpty && isEmptyValue(fieldByIndex(v, f.index)) {
			continue
		}
		switch f.enc.kind {
		case kindScalar:
			w.newLine(depth)
			w.buf = append(w.buf, f.key...)
			w.buf = append(w.buf, ':', ' ')
			if w.buf, err = f.append(w.buf, unsafe.Add(base, f.off), w.delim); err != nil {
				return err
			}
			continue
		}
		fv := fieldByIndex(v, f.index)
		switch f.enc.kind {
		case kindTable:
			if err = w.table(f.key, f.enc.row, fv, depth); err != nil {
				return err
			}
		case kindInline:
			if err = w.inline(f.key, f.enc.elem, fv, depth); err != nil {
				return err
			}
		}
	}
	return nil
}

// nullOrEmpty handles the nil and empty slice, returning true when done.
func (w *writer) nullOrEmpty(key []byte, v reflect.Value, depth int) bool {
	if v.Len() > 0 {
		return false
	}
	w.newLine(depth)
	if key != nil {
		w.buf = append(w.buf, key...)
		w.buf = append(w.buf, ':', ' ')
	}
	if v.IsNil() {
		w.buf = append(w.buf, "null"...) // encoding/json writes nil slices as null
	} else {
		w.buf = append(w.buf, '[', ']')
	}
	return true
}

func (w *writer) arrayHeader(key []byte, n int) {
	w.buf = append(w.buf, key...)
	w.buf = append(w.buf, '[')
	w.buf = appendInt(w.buf, int64(n))
	if w.delim != Comma {
		w.buf = append(w.buf, byte(w.delim))
	}
	w.buf = append(w.buf, ']')
}

// table writes a slice of row structs in tabular form.
func (w *writer) table(key []byte, r *rowEncoder, v reflect.Value, depth int) error {
	if w.nullOrEmpty(key, v, depth) {
		return nil
	}
	n := v.Len()
	w.newLine(depth)
	w.arrayHeader(key, n)
	w.buf = append(w.buf, '{')
	w.buf = append(w.buf, r.header[delimIndex(w.delim)]...)
	w.buf = append(w.buf, '}', ':')
	// Work on a local slice: storing into w.buf on every append would cost
	// a GC write barrier each time.
	base := v.UnsafePointer()
	buf := w.buf
	indent := (depth + 1) * w.indent
	var err error
	for i := 0; i < n; i++ {
		buf = append(buf, '\n')
		for j := indent; j > 0; j-- {
			buf = append(buf, ' ')
		}
		if buf, err = appendRow(buf, r, unsafe.Add(base, uintptr(i)*r.size), w.delim); err != nil {
			return err
		}
	}
	w.buf = buf
	return nil
}

// appendRow appends one row's cells.
func appendRow(buf []byte, r *rowEncoder, ptr unsafe.Pointer, delim Delimiter) ([]byte, error) {
	var err error
	for j := range r.cells {
		c := &r.cells[j]
		if j > 0 {
			buf = append(buf, byte(delim))
		}
		if buf, err = c.append(buf, unsafe.Add(ptr, c.off), delim); err != nil {
			return buf, err
		}
	}
	return buf, nil
}

// inline writes a slice of scalars as key[N]: a,b,c.
func (w *writer) inline(key []byte, elem *typeEncoder, v reflect.Value, depth int) error {
	if w.nullOrEmpty(key, v, depth) {
		return nil
	}
	n := v.Len()
	w.newLine(depth)
	w.arrayHeader(key, n)
	w.buf = append(w.buf, ':', ' ')
	var err error
	for i := 0; i < n; i++ {
		if i > 0 {
			w.buf = append(w.buf, byte(w.delim))
		}
		if w.buf, err = elem.scalar(w.buf, v.Index(i), w.delim); err != nil {
			return err
		}
	}
	return nil
}
