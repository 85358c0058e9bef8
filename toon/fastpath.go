package toon

import (
	"reflect"
	"strconv"
	"time"
	"unsafe"
)

// The hot paths (table rows, struct fields) address fields by offset
// instead of through reflect.Value: one reflect call per row instead of
// several per cell. Only plain kinds get a hand-written accessor; anything
// with a marshaler falls back to the reflect-based function through
// reflect.NewAt, which does not allocate.

// ptrAppender appends the scalar stored at ptr.
type ptrAppender func(dst []byte, ptr unsafe.Pointer, d Delimiter) ([]byte, error)

// ptrSetter stores a token into the scalar at ptr. The token is passed by
// value: a pointer would make it escape to the heap (or, kept in the
// parser, cost a GC write barrier per cell).
type ptrSetter func(p *parser, ptr unsafe.Pointer, t token) error

// plainKind reports whether t is encoded by its kind alone: no marshaler
// or unmarshaler of any sort and not one of the package's special types.
func plainKind(t reflect.Type) bool {
	if t == numberType || t == jsonNumberType {
		return false
	}
	for _, x := range []reflect.Type{t, reflect.PointerTo(t)} {
		if x.Implements(textMarshalerType) || x.Implements(jsonMarshalerType) ||
			x.Implements(textUnmarshalerType) || x.Implements(jsonUnmarshalerType) {
			return false
		}
	}
	return true
}

// fieldOffset sums the offsets along an index path through embedded
// (never pointer) structs.
func fieldOffset(t reflect.Type, index []int) uintptr {
	var off uintptr
	for _, i := range index {
		f := t.Field(i)
		off += f.Offset
		t = f.Type
	}
	return off
}

func ptrAppenderFor(t reflect.Type) ptrAppender {
	if t == timeType {
		return func(dst []byte, ptr unsafe.Pointer, _ Delimiter) ([]byte, error) {
			dst = append(dst, '"')
			dst = appendTime(dst, *(*time.Time)(ptr))
			return append(dst, '"'), nil
		}
	}
	if plainKind(t) {
		switch t.Kind() {
		case reflect.String:
			return func(dst []byte, ptr unsafe.Pointer, d Delimiter) ([]byte, error) {
				return appendString(dst, *(*string)(ptr), d), nil
			}
		case reflect.Bool:
			return func(dst []byte, ptr unsafe.Pointer, _ Delimiter) ([]byte, error) {
				if *(*bool)(ptr) {
					return append(dst, "true"...), nil
				}
				return append(dst, "false"...), nil
			}
		case reflect.Int64:
			return func(dst []byte, ptr unsafe.Pointer, _ Delimiter) ([]byte, error) {
				return strconv.AppendInt(dst, *(*int64)(ptr), 10), nil
			}
		case reflect.Int:
			return func(dst []byte, ptr unsafe.Pointer, _ Delimiter) ([]byte, error) {
				return strconv.AppendInt(dst, int64(*(*int)(ptr)), 10), nil
			}
		case reflect.Int32:
			return func(dst []byte, ptr unsafe.Pointer, _ Delimiter) ([]byte, error) {
				return strconv.AppendInt(dst, int64(*(*int32)(ptr)), 10), nil
			}
		case reflect.Float64:
			return func(dst []byte, ptr unsafe.Pointer, _ Delimiter) ([]byte, error) {
				return appendFloat(dst, *(*float64)(ptr), 64), nil
			}
		}
	}
	f := scalarFor(t)
	if f == nil {
		return nil
	}
	return func(dst []byte, ptr unsafe.Pointer, d Delimiter) ([]byte, error) {
		return f(dst, reflect.NewAt(t, ptr).Elem(), d)
	}
}

func ptrSetterFor(d *decoder) ptrSetter {
	t := d.typ
	if t == timeType {
		return func(p *parser, ptr unsafe.Pointer, tk token) error {
			if tk.kind != tokString {
				return setTime(p, reflect.NewAt(t, ptr).Elem(), &tk)
			}
			tm, err := parseTime(tk.s)
			if err != nil {
				return errorf(ErrType, p.cur.num, tk.col, "%v", err)
			}
			*(*time.Time)(ptr) = tm
			return nil
		}
	}
	if d.kind == dScalar && plainKind(t) {
		switch t.Kind() {
		case reflect.String:
			return func(p *parser, ptr unsafe.Pointer, tk token) error {
				if tk.kind != tokString {
					return setString(p, reflect.NewAt(t, ptr).Elem(), &tk)
				}
				*(*string)(ptr) = p.keep(tk.s)
				return nil
			}
		case reflect.Int64:
			return func(p *parser, ptr unsafe.Pointer, tk token) error {
				if tk.kind == tokNumber {
					if n, ok := parseSmallInt(tk.s); ok {
						*(*int64)(ptr) = n
						return nil
					}
				}
				return setInt(p, reflect.NewAt(t, ptr).Elem(), &tk)
			}
		case reflect.Bool:
			return func(p *parser, ptr unsafe.Pointer, tk token) error {
				switch tk.kind {
				case tokTrue:
					*(*bool)(ptr) = true
					return nil
				case tokFalse:
					*(*bool)(ptr) = false
					return nil
				}
				return setBool(p, reflect.NewAt(t, ptr).Elem(), &tk)
			}
		}
	}
	return func(p *parser, ptr unsafe.Pointer, tk token) error {
		return p.setScalar(d, reflect.NewAt(t, ptr).Elem(), &tk)
	}
}

// parseSmallInt parses an optionally negative decimal integer of at most
// 18 digits, which cannot overflow an int64; anything else is left to
// strconv.
func parseSmallInt(s string) (int64, bool) {
	neg := len(s) > 0 && s[0] == '-'
	if neg {
		s = s[1:]
	}
	if len(s) == 0 || len(s) > 18 {
		return 0, false
	}
	var n int64
	for i := 0; i < len(s); i++ {
		c := s[i] - '0'
		if c > 9 {
			return 0, false
		}
		n = n*10 + int64(c)
	}
	if neg {
		n = -n
	}
	return n, true
}
