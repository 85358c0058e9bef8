package toon

import (
	"encoding"
	"encoding/base64"
	"fmt"
	"reflect"
	"sync"
	"time"
	"unsafe"
)

// Marshal returns the TOON encoding of v with the default options.
func Marshal(v any) ([]byte, error) { return MarshalOptions{}.Marshal(v) }

// Marshal returns the TOON encoding of v; see the package documentation
// for how Go values map to TOON.
func (o MarshalOptions) Marshal(v any) ([]byte, error) {
	st := encStatePool.Get().(*encState)
	buf, err := o.Append(st.buf[:0], v)
	var out []byte
	if err == nil {
		out = make([]byte, len(buf))
		copy(out, buf)
	}
	if cap(buf) <= 1<<20 { // do not pin huge buffers in the pool
		st.buf = buf
		encStatePool.Put(st)
	}
	return out, err
}

// encState is pooled scratch space, so that Marshal allocates only its
// result once the pool is warm.
type encState struct{ buf []byte }

var encStatePool = sync.Pool{New: func() any { return &encState{buf: make([]byte, 0, 4096)} }}

// Append appends the TOON encoding of v to dst.
func (o MarshalOptions) Append(dst []byte, v any) ([]byte, error) {
	o, err := o.normalized()
	if err != nil {
		return dst, err
	}
	rv := reflect.ValueOf(v)
	for rv.IsValid() && rv.Kind() == reflect.Pointer {
		if rv.IsNil() {
			return append(dst, "null"...), nil
		}
		rv = rv.Elem()
	}
	if !rv.IsValid() {
		return append(dst, "null"...), nil
	}
	te := encoderFor(rv.Type())
	if te.kind == kindObject && !rv.CanAddr() {
		c := reflect.New(rv.Type()) // the fast path reads fields by address
		c.Elem().Set(rv)
		rv = c.Elem()
	}
	w := writer{buf: dst, indent: o.Indent, delim: o.Delimiter, start: len(dst)}
	switch te.kind {
	case kindObject:
		err = w.object(te, rv, 0)
		return w.buf, err
	case kindTable:
		err = w.table(nil, te.row, rv, 0)
		return w.buf, err
	case kindInline:
		err = w.inline(nil, te.elem, rv, 0)
		return w.buf, err
	}
	n := normalizer{maxDepth: o.MaxDepth}
	x, err := n.value(rv, 0)
	if err != nil {
		return dst, err
	}
	g := genEncoder{buf: dst, indent: o.Indent, delim: o.Delimiter}
	g.encodeRoot(x)
	return g.buf, nil
}

// encKind says how a Go type is encoded.
type encKind uint8

const (
	// kindGeneric values are normalized to the generic model first: the
	// layout of maps, interfaces and nested structs depends on their
	// contents (tabular or list, keyed or nested), not on their type.
	kindGeneric encKind = iota
	// kindScalar values are primitives: strings, numbers, booleans,
	// time.Time, text marshalers, pointers to those (nil is null).
	kindScalar
	// kindObject is a struct whose fields are scalars, slices of scalars
	// or slices of row structs: its layout is known from its type alone.
	kindObject
	// kindTable is a slice of row structs: structs whose fields are all
	// scalars without omitempty, so every element has the same keys and
	// the slice is always tabular.
	kindTable
	// kindInline is a slice of scalars: an inline array.
	kindInline
)

// scalarFunc appends a primitive with quoting decided by delim.
type scalarFunc func(dst []byte, v reflect.Value, delim Delimiter) ([]byte, error)

// typeEncoder is the compiled encoder of one Go type.
type typeEncoder struct {
	kind   encKind
	scalar scalarFunc   // kindScalar
	fields []fastField  // kindObject
	row    *rowEncoder  // kindTable
	elem   *typeEncoder // kindInline: the element's scalar encoder
}

type fastField struct {
	*structField
	enc    *typeEncoder
	off    uintptr
	append ptrAppender // scalars
}

// rowEncoder encodes one row struct as table cells.
type rowEncoder struct {
	size   uintptr // of the row struct
	cells  []rowCell
	fields []field
	// header caches the {f1,f2} segment for each delimiter.
	header [3][]byte
}

type rowCell struct {
	off    uintptr
	append ptrAppender
}

func delimIndex(d Delimiter) int {
	switch d {
	case Tab:
		return 1
	case Pipe:
		return 2
	}
	return 0
}

var encoderCache sync.Map // reflect.Type -> *typeEncoder

func encoderFor(t reflect.Type) *typeEncoder {
	if te, ok := encoderCache.Load(t); ok {
		return te.(*typeEncoder)
	}
	te := compileEncoder(t)
	v, _ := encoderCache.LoadOrStore(t, te)
	return v.(*typeEncoder)
}

func compileEncoder(t reflect.Type) *typeEncoder {
	if f := scalarFor(t); f != nil {
		return &typeEncoder{kind: kindScalar, scalar: f}
	}
	switch t.Kind() {
	case reflect.Struct:
		if fields, ok := objectFields(t); ok {
			return &typeEncoder{kind: kindObject, fields: fields}
		}
	case reflect.Slice:
		if r := rowEncoderFor(t.Elem()); r != nil {
			return &typeEncoder{kind: kindTable, row: r}
		}
		if f := scalarFor(t.Elem()); f != nil {
			return &typeEncoder{kind: kindInline, elem: &typeEncoder{kind: kindScalar, scalar: f}}
		}
	}
	return &typeEncoder{kind: kindGeneric}
}

func objectFields(t reflect.Type) ([]fastField, bool) {
	si := cachedStruct(t)
	out := make([]fastField, 0, len(si.fields))
	for i := range si.fields {
		f := &si.fields[i]
		var te *typeEncoder
		if s := scalarFor(f.typ); s != nil {
			te = &typeEncoder{kind: kindScalar, scalar: s}
		} else if f.typ.Kind() == reflect.Slice && f.typ != t {
			if r := rowEncoderFor(f.typ.Elem()); r != nil {
				te = &typeEncoder{kind: kindTable, row: r}
			} else if s := scalarFor(f.typ.Elem()); s != nil {
				te = &typeEncoder{kind: kindInline, elem: &typeEncoder{kind: kindScalar, scalar: s}}
			}
		}
		if te == nil {
			return nil, false
		}
		ff := fastField{structField: f, enc: te, off: fieldOffset(t, f.index)}
		if te.kind == kindScalar {
			ff.append = ptrAppenderFor(f.typ)
		}
		out = append(out, ff)
	}
	return out, true
}

// rowEncoderFor returns the row encoder of t when t is a row struct.
func rowEncoderFor(t reflect.Type) *rowEncoder {
	if t.Kind() != reflect.Struct || scalarFor(t) != nil {
		return nil
	}
	si := cachedStruct(t)
	if len(si.fields) == 0 {
		return nil
	}
	r := &rowEncoder{size: t.Size()}
	for i := range si.fields {
		f := &si.fields[i]
		s := scalarFor(f.typ)
		if s == nil || f.omitEmpty {
			return nil
		}
		r.cells = append(r.cells, rowCell{fieldOffset(t, f.index), ptrAppenderFor(f.typ)})
		r.fields = append(r.fields, field{name: f.name})
	}
	for i, d := range []Delimiter{Comma, Tab, Pipe} {
		r.header[i] = appendFieldList(nil, r.fields, d)
	}
	return r
}

// scalarFor returns the primitive encoder of t, or nil if t is not a
// primitive type.
func scalarFor(t reflect.Type) scalarFunc {
	switch t {
	case timeType:
		return encodeTime
	case numberType, jsonNumberType:
		return encodeNumber
	}
	if t.Implements(jsonMarshalerType) || reflect.PointerTo(t).Implements(jsonMarshalerType) {
		return nil // its JSON may be anything: normalize it
	}
	if t.Kind() != reflect.Pointer && reflect.PointerTo(t).Implements(textMarshalerType) {
		return encodeTextAddr
	}
	if t.Implements(textMarshalerType) {
		if t.Kind() == reflect.Pointer {
			return encodeTextPtr
		}
		return encodeText
	}
	switch t.Kind() {
	case reflect.Bool:
		return encodeBool
	case reflect.String:
		return encodeStringValue
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return encodeInt
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		return encodeUint
	case reflect.Float32:
		return encodeFloat32
	case reflect.Float64:
		return encodeFloat64
	case reflect.Slice:
		if t.Elem().Kind() == reflect.Uint8 && scalarFor(t.Elem()) != nil && !reflect.PointerTo(t.Elem()).Implements(textMarshalerType) {
			return encodeBytes
		}
	case reflect.Pointer:
		if elem := scalarFor(t.Elem()); elem != nil {
			return func(dst []byte, v reflect.Value, d Delimiter) ([]byte, error) {
				if v.IsNil() {
					return append(dst, "null"...), nil
				}
				return elem(dst, v.Elem(), d)
			}
		}
	}
	return nil
}

func encodeBool(dst []byte, v reflect.Value, _ Delimiter) ([]byte, error) {
	if v.Bool() {
		return append(dst, "true"...), nil
	}
	return append(dst, "false"...), nil
}

func encodeStringValue(dst []byte, v reflect.Value, d Delimiter) ([]byte, error) {
	return appendString(dst, v.String(), d), nil
}

func encodeInt(dst []byte, v reflect.Value, _ Delimiter) ([]byte, error) {
	return appendInt(dst, v.Int()), nil
}

func encodeUint(dst []byte, v reflect.Value, _ Delimiter) ([]byte, error) {
	return appendUint(dst, v.Uint()), nil
}

func encodeFloat32(dst []byte, v reflect.Value, _ Delimiter) ([]byte, error) {
	return appendFloat(dst, v.Float(), 32), nil
}

func encodeFloat64(dst []byte, v reflect.Value, _ Delimiter) ([]byte, error) {
	return appendFloat(dst, v.Float(), 64), nil
}

func encodeNumber(dst []byte, v reflect.Value, _ Delimiter) ([]byte, error) {
	s := v.String()
	if s == "" && v.Type() == jsonNumberType {
		s = "0" // encoding/json writes the empty json.Number as 0
	}
	if !isJSONNumber(s) {
		return dst, fmt.Errorf("toon: %w: invalid number %q", ErrType, s)
	}
	return appendCanonical(dst, s), nil
}

func encodeBytes(dst []byte, v reflect.Value, _ Delimiter) ([]byte, error) {
	if v.IsNil() {
		return append(dst, "null"...), nil
	}
	b := v.Bytes()
	// As in encoding/json, bytes are a base64 string; its alphabet holds
	// no delimiter, so only the generic rules (a leading '+', say) apply.
	return appendString(dst, base64.StdEncoding.EncodeToString(b), Comma), nil
}

// encodeTime writes RFC 3339 with nanoseconds; the colons always require
// quotes and nothing inside needs escaping.
func encodeTime(dst []byte, v reflect.Value, _ Delimiter) ([]byte, error) {
	var t time.Time
	if v.CanAddr() {
		t = *(*time.Time)(v.Addr().UnsafePointer()) // Interface would copy
	} else {
		t = v.Interface().(time.Time)
	}
	dst = append(dst, '"')
	dst = appendTime(dst, t)
	return append(dst, '"'), nil
}

func encodeText(dst []byte, v reflect.Value, d Delimiter) ([]byte, error) {
	return appendText(dst, v.Interface().(encoding.TextMarshaler), d)
}

func encodeTextAddr(dst []byte, v reflect.Value, d Delimiter) ([]byte, error) {
	if !v.CanAddr() {
		c := reflect.New(v.Type())
		c.Elem().Set(v)
		v = c.Elem()
	}
	return appendText(dst, v.Addr().Interface().(encoding.TextMarshaler), d)
}

func encodeTextPtr(dst []byte, v reflect.Value, d Delimiter) ([]byte, error) {
	if v.IsNil() {
		return append(dst, "null"...), nil
	}
	return appendText(dst, v.Interface().(encoding.TextMarshaler), d)
}

func appendText(dst []byte, m encoding.TextMarshaler, d Delimiter) ([]byte, error) {
	b, err := m.MarshalText()
	if err != nil {
		return dst, fmt.Errorf("toon: %w: %v", ErrType, err)
	}
	return appendString(dst, unsafe.String(unsafe.SliceData(b), len(b)), d), nil
}
