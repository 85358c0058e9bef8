package toon

import (
	"encoding"
	"encoding/base64"
	"encoding/json"
	"reflect"
	"strconv"
	"sync"
	"time"
)

// dKind says how decoded values are stored into a Go type.
type dKind uint8

const (
	dUnsupported dKind = iota // chan, func, ...: any value is ErrType
	dScalar                   // primitives through decoder.scalar
	dStruct
	dMap
	dSlice
	dArray
	dPtr
	dIface  // empty interface: generic values
	dObject // toon.Object
	dSkip   // unknown struct field: parse and discard
	dJSON   // json.Unmarshaler: the TOON value is handed over as JSON
)

// scalarSetter stores a primitive token into v.
type scalarSetter func(p *parser, v reflect.Value, t *token) error

// decoder is the compiled decoder of one Go type.
type decoder struct {
	typ    reflect.Type
	kind   dKind
	scalar scalarSetter
	elem   *decoder // slice, array, pointer, map value
	si     *structInfo
	fields []*decoder // parallel to si.fields

	cellsOnce sync.Once
	cells     []planCell // parallel to si.fields: by-address setters
}

// setters returns, per struct field, a by-address setter for fields of a
// plain scalar kind (nil otherwise). It is computed on first use because
// field decoders of recursive types are complete only after compilation.
func (d *decoder) setters() []planCell {
	d.cellsOnce.Do(func() {
		d.cells = make([]planCell, len(d.si.fields))
		for i, fd := range d.fields {
			if fd.kind == dScalar && (fd.typ == timeType || plainKind(fd.typ)) {
				d.cells[i] = planCell{ptrSetterFor(fd), fieldOffset(d.typ, d.si.fields[i].index)}
			}
		}
	})
	return d.cells
}

var (
	decoderCache sync.Map // reflect.Type -> *decoder
	compileMu    sync.Mutex
	skipDecoder  = &decoder{kind: dSkip}
	anyDecoder   = &decoder{typ: reflect.TypeFor[any](), kind: dIface}
)

func decoderFor(t reflect.Type) *decoder {
	if d, ok := decoderCache.Load(t); ok {
		return d.(*decoder)
	}
	compileMu.Lock()
	defer compileMu.Unlock()
	building := map[reflect.Type]*decoder{}
	d := compileDecoder(t, building)
	for t, d := range building {
		decoderCache.LoadOrStore(t, d)
	}
	return d
}

// compileDecoder builds t's decoder; building holds decoders under
// construction so that recursive types terminate.
func compileDecoder(t reflect.Type, building map[reflect.Type]*decoder) *decoder {
	if d, ok := decoderCache.Load(t); ok {
		return d.(*decoder)
	}
	if d, ok := building[t]; ok {
		return d
	}
	d := &decoder{typ: t}
	building[t] = d
	pt := reflect.PointerTo(t)
	switch {
	case t == timeType:
		d.kind, d.scalar = dScalar, setTime
		return d
	case t == numberType:
		d.kind, d.scalar = dScalar, setNumber
		return d
	case t == jsonNumberType:
		d.kind, d.scalar = dScalar, setJSONNumber
		return d
	case t == objectType:
		d.kind = dObject
		return d
	case t.Kind() != reflect.Pointer && pt.Implements(jsonUnmarshalerType):
		d.kind = dJSON
		return d
	case t.Kind() != reflect.Pointer && pt.Implements(textUnmarshalerType):
		d.kind, d.scalar = dScalar, setText
		return d
	}
	switch t.Kind() {
	case reflect.Bool:
		d.kind, d.scalar = dScalar, setBool
	case reflect.String:
		d.kind, d.scalar = dScalar, setString
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		d.kind, d.scalar = dScalar, setInt
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		d.kind, d.scalar = dScalar, setUint
	case reflect.Float32, reflect.Float64:
		d.kind, d.scalar = dScalar, setFloat
	case reflect.Interface:
		if t.NumMethod() == 0 {
			d.kind = dIface
		}
	case reflect.Pointer:
		d.kind, d.elem = dPtr, compileDecoder(t.Elem(), building)
	case reflect.Slice:
		if t.Elem().Kind() == reflect.Uint8 && !reflect.PointerTo(t.Elem()).Implements(textUnmarshalerType) {
			d.kind, d.scalar = dScalar, setBytes
			break
		}
		d.kind, d.elem = dSlice, compileDecoder(t.Elem(), building)
	case reflect.Array:
		d.kind, d.elem = dArray, compileDecoder(t.Elem(), building)
	case reflect.Map:
		k := t.Key()
		if k.Kind() == reflect.String || reflect.PointerTo(k).Implements(textUnmarshalerType) ||
			(k.Kind() >= reflect.Int && k.Kind() <= reflect.Uintptr) {
			d.kind, d.elem = dMap, compileDecoder(t.Elem(), building)
		}
	case reflect.Struct:
		d.kind = dStruct
		d.si = cachedStruct(t)
		d.fields = make([]*decoder, len(d.si.fields))
		for i := range d.si.fields {
			d.fields[i] = compileDecoder(d.si.fields[i].typ, building)
		}
	}
	return d
}

// typeError reports a token that does not fit v.
func (p *parser) typeError(t *token, v reflect.Value) error {
	return errorf(ErrType, p.cur.num, t.col, "cannot decode %s into Go value of type %s", t.kind, v.Type())
}

func setString(p *parser, v reflect.Value, t *token) error {
	switch t.kind {
	case tokString:
		v.SetString(p.keep(t.s))
	case tokNull:
	default:
		return p.typeError(t, v)
	}
	return nil
}

func setBool(p *parser, v reflect.Value, t *token) error {
	switch t.kind {
	case tokTrue:
		v.SetBool(true)
	case tokFalse:
		v.SetBool(false)
	case tokNull:
	default:
		return p.typeError(t, v)
	}
	return nil
}

// integerText returns the token as plain integer digits when it denotes an
// integer in another spelling (1e3, 10.0).
func integerText(s string) string {
	var buf [32]byte
	c := appendCanonical(buf[:0], s)
	for _, ch := range c {
		if ch == '.' || ch == 'e' {
			return ""
		}
	}
	return string(c)
}

func setInt(p *parser, v reflect.Value, t *token) error {
	switch t.kind {
	case tokNumber:
		n, err := strconv.ParseInt(t.s, 10, 64)
		if err != nil {
			if s := integerText(t.s); s != "" {
				n, err = strconv.ParseInt(s, 10, 64)
			}
		}
		if err != nil || v.OverflowInt(n) {
			return errorf(ErrType, p.cur.num, t.col, "number %s does not fit Go type %s", t.s, v.Type())
		}
		v.SetInt(n)
	case tokNull:
	default:
		return p.typeError(t, v)
	}
	return nil
}

func setUint(p *parser, v reflect.Value, t *token) error {
	switch t.kind {
	case tokNumber:
		n, err := strconv.ParseUint(t.s, 10, 64)
		if err != nil {
			if s := integerText(t.s); s != "" {
				n, err = strconv.ParseUint(s, 10, 64)
			}
		}
		if err != nil || v.OverflowUint(n) {
			return errorf(ErrType, p.cur.num, t.col, "number %s does not fit Go type %s", t.s, v.Type())
		}
		v.SetUint(n)
	case tokNull:
	default:
		return p.typeError(t, v)
	}
	return nil
}

func setFloat(p *parser, v reflect.Value, t *token) error {
	switch t.kind {
	case tokNumber:
		f, err := strconv.ParseFloat(t.s, v.Type().Bits())
		if err != nil || v.OverflowFloat(f) {
			return errorf(ErrType, p.cur.num, t.col, "number %s does not fit Go type %s", t.s, v.Type())
		}
		v.SetFloat(f)
	case tokNull:
	default:
		return p.typeError(t, v)
	}
	return nil
}

func setNumber(p *parser, v reflect.Value, t *token) error {
	switch t.kind {
	case tokNumber:
		v.SetString(string(p.number(t.s)))
	case tokNull:
	default:
		return p.typeError(t, v)
	}
	return nil
}

func setJSONNumber(p *parser, v reflect.Value, t *token) error { return setNumber(p, v, t) }

func setTime(p *parser, v reflect.Value, t *token) error {
	switch t.kind {
	case tokString:
		tm, err := parseTime(t.s)
		if err != nil {
			return errorf(ErrType, p.cur.num, t.col, "%v", err)
		}
		if v.CanAddr() {
			*(*time.Time)(v.Addr().UnsafePointer()) = tm
		} else {
			v.Set(reflect.ValueOf(tm))
		}
	case tokNull:
	default:
		return p.typeError(t, v)
	}
	return nil
}

func setText(p *parser, v reflect.Value, t *token) error {
	switch t.kind {
	case tokString:
		if err := v.Addr().Interface().(encoding.TextUnmarshaler).UnmarshalText([]byte(t.s)); err != nil {
			return errorf(ErrType, p.cur.num, t.col, "%v", err)
		}
	case tokNull:
	default:
		return p.typeError(t, v)
	}
	return nil
}

func setBytes(p *parser, v reflect.Value, t *token) error {
	switch t.kind {
	case tokString:
		b, err := base64.StdEncoding.DecodeString(t.s)
		if err != nil {
			return errorf(ErrType, p.cur.num, t.col, "%v", err)
		}
		v.SetBytes(b)
	case tokNull:
		v.SetZero()
	default:
		return p.typeError(t, v)
	}
	return nil
}

// generic returns a token as a generic value.
func (p *parser) generic(t *token) any {
	switch t.kind {
	case tokString:
		return p.keep(t.s)
	case tokNumber:
		return p.number(t.s)
	case tokTrue:
		return true
	case tokFalse:
		return false
	}
	return nil
}

// number returns the canonical Number of a number token.
func (p *parser) number(s string) Number {
	if isCanonicalInt(s) {
		return Number(p.keep(s))
	}
	var buf [40]byte
	return Number(appendCanonical(buf[:0], s))
}

// setScalar stores a primitive token into a target of any kind.
func (p *parser) setScalar(d *decoder, v reflect.Value, t *token) error {
	switch d.kind {
	case dScalar:
		return d.scalar(p, v, t)
	case dSkip:
		return nil
	case dIface:
		if x := p.generic(t); x != nil {
			v.Set(reflect.ValueOf(x))
		} else {
			v.SetZero()
		}
		return nil
	case dPtr:
		if t.kind == tokNull {
			v.SetZero()
			return nil
		}
		if v.IsNil() {
			v.Set(reflect.New(d.typ.Elem()))
		}
		return p.setScalar(d.elem, v.Elem(), t)
	case dJSON:
		return p.unmarshalJSON(v, p.generic(t), t.col)
	case dSlice, dMap, dObject:
		if t.kind == tokNull {
			v.SetZero()
			return nil
		}
	case dStruct, dArray:
		if t.kind == tokNull {
			return nil
		}
	}
	return p.typeError(t, v)
}

func (p *parser) unmarshalJSON(v reflect.Value, x any, col int) error {
	b, err := ToJSON(x)
	if err == nil {
		err = v.Addr().Interface().(json.Unmarshaler).UnmarshalJSON(b)
	}
	if err != nil {
		return errorf(ErrType, p.cur.num, col, "%v", err)
	}
	return nil
}
