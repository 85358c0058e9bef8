package toon

import (
	"encoding"
	"reflect"
	"strconv"
	"unsafe"
)

// objTarget receives the members of one decoded object: struct fields, map
// entries, or a generic Object under construction.
type objTarget struct {
	d    *decoder
	v    reflect.Value
	mode dKind
	b    *objBuilder    // generic modes
	slot *any           // generic modes: the member being decoded
	tmp  reflect.Value  // dMap: the value being decoded
	base unsafe.Pointer // dStruct: the struct's address, for setter
}

// setter returns the by-address setter of struct field key, or nil when
// the target is not a struct or the field needs the reflect path.
func (o *objTarget) setter(key string) *planCell {
	if o.mode != dStruct || o.base == nil {
		return nil
	}
	cells := o.d.setters()
	if i := o.d.si.find(key); i >= 0 && cells[i].set != nil {
		return &cells[i]
	}
	return nil
}

func (p *parser) beginObject(d *decoder, v reflect.Value, col int) (objTarget, error) {
	switch d.kind {
	case dPtr:
		if v.IsNil() {
			v.Set(reflect.New(d.typ.Elem()))
		}
		return p.beginObject(d.elem, v.Elem(), col)
	case dStruct:
		o := objTarget{d: d, v: v, mode: dStruct}
		if v.CanAddr() {
			o.base = v.Addr().UnsafePointer()
		}
		return o, nil
	case dMap:
		if v.IsNil() {
			v.Set(reflect.MakeMap(d.typ))
		}
		return objTarget{d: d, v: v, mode: dMap}, nil
	case dIface, dObject, dJSON:
		return objTarget{d: d, v: v, mode: d.kind, b: &objBuilder{}, slot: new(any)}, nil
	case dSkip:
		return objTarget{mode: dSkip}, nil
	}
	return objTarget{}, errorf(ErrType, p.cur.num, col, "cannot decode object into Go value of type %s", d.typ)
}

// field returns where the value of key goes.
func (o *objTarget) field(key string) (*decoder, reflect.Value) {
	switch o.mode {
	case dStruct:
		i := o.d.si.find(key)
		if i < 0 {
			return skipDecoder, reflect.Value{}
		}
		return o.d.fields[i], fieldByIndex(o.v, o.d.si.fields[i].index)
	case dMap:
		o.tmp = reflect.New(o.d.elem.typ).Elem()
		return o.d.elem, o.tmp
	case dIface, dObject, dJSON:
		*o.slot = nil
		return anyDecoder, reflect.ValueOf(o.slot).Elem()
	}
	return skipDecoder, reflect.Value{}
}

// commit stores the value decoded for key.
func (o *objTarget) commit(p *parser, key string, col int) error {
	switch o.mode {
	case dMap:
		k, err := mapKey(o.d.typ.Key(), p.keep(key))
		if err != nil {
			return errorf(ErrType, p.cur.num, col, "map key %q: %v", key, err)
		}
		o.v.SetMapIndex(k, o.tmp)
	case dIface, dObject, dJSON:
		o.b.set(p.keep(key), *o.slot)
	}
	return nil
}

func (o *objTarget) end(p *parser, col int) error {
	switch o.mode {
	case dIface, dObject:
		o.v.Set(reflect.ValueOf(o.b.object()))
	case dJSON:
		return p.unmarshalJSON(o.v, o.b.object(), col)
	}
	return nil
}

func mapKey(t reflect.Type, s string) (reflect.Value, error) {
	if reflect.PointerTo(t).Implements(textUnmarshalerType) {
		k := reflect.New(t)
		if err := k.Interface().(encoding.TextUnmarshaler).UnmarshalText([]byte(s)); err != nil {
			return reflect.Value{}, err
		}
		return k.Elem(), nil
	}
	k := reflect.New(t).Elem()
	switch t.Kind() {
	case reflect.String:
		k.SetString(s)
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		n, err := strconv.ParseInt(s, 10, 64)
		if err != nil || k.OverflowInt(n) {
			return k, strconv.ErrRange
		}
		k.SetInt(n)
	default:
		n, err := strconv.ParseUint(s, 10, 64)
		if err != nil || k.OverflowUint(n) {
			return k, strconv.ErrRange
		}
		k.SetUint(n)
	}
	return k, nil
}

// arrTarget receives the elements of one decoded array.
type arrTarget struct {
	d     *decoder
	v     reflect.Value
	mode  dKind
	n     int
	fresh bool  // dSlice: the backing array was allocated here, already zero
	items []any // generic modes
	// lazy is the struct fast path's dSlice mode (see nextPtr): elements
	// are addressed in data directly and the length is set once, in end.
	lazy bool
	data unsafe.Pointer
	capN int
	slot *any
}

// preallocBytes bounds what a declared length may reserve up front: the
// length is untrusted input (items[999999999]: costs nothing to write), so
// a slice starts at most this big and grows as elements actually arrive.
const preallocBytes = 64 << 10

func preallocLen(declared int, elemSize uintptr) int {
	if elemSize == 0 {
		elemSize = 1
	}
	return min(declared, max(16, int(preallocBytes/elemSize)))
}

func (p *parser) beginArray(d *decoder, v reflect.Value, declared, col int) (arrTarget, error) {
	switch d.kind {
	case dPtr:
		if v.IsNil() {
			v.Set(reflect.New(d.typ.Elem()))
		}
		return p.beginArray(d.elem, v.Elem(), declared, col)
	case dSlice:
		fresh := v.IsNil()
		if fresh {
			if declared > 0 {
				v.Set(reflect.MakeSlice(d.typ, 0, preallocLen(declared, d.typ.Elem().Size())))
			}
		} else {
			v.SetLen(0)
		}
		return arrTarget{d: d, v: v, mode: dSlice, fresh: fresh}, nil
	case dArray:
		return arrTarget{d: d, v: v, mode: dArray}, nil
	case dIface, dJSON:
		return arrTarget{d: d, v: v, mode: d.kind, items: make([]any, 0, preallocLen(declared, 16)), slot: new(any)}, nil
	case dSkip:
		return arrTarget{mode: dSkip}, nil
	}
	return arrTarget{}, errorf(ErrType, p.cur.num, col, "cannot decode array into Go value of type %s", d.typ)
}

// next returns where the next element goes; commit must follow.
func (a *arrTarget) next() (*decoder, reflect.Value) {
	switch a.mode {
	case dSlice:
		v := a.v
		if a.n == v.Cap() {
			ns := reflect.MakeSlice(a.d.typ, a.n, max(4, 2*a.n))
			reflect.Copy(ns, v)
			v.Set(ns)
			a.fresh = true
		}
		v.SetLen(a.n + 1)
		ev := v.Index(a.n)
		if !a.fresh {
			ev.SetZero() // reused backing array: clear the old element
		}
		return a.d.elem, ev
	case dArray:
		if a.n < a.v.Len() {
			return a.d.elem, a.v.Index(a.n)
		}
	case dIface, dJSON:
		*a.slot = nil
		return anyDecoder, reflect.ValueOf(a.slot).Elem()
	}
	return skipDecoder, reflect.Value{}
}

// nextPtr is next for the table fast path on slices of structs: it
// returns the next element's address, growing the backing array by hand
// and leaving the slice length to end, so a row costs no reflect call.
func (a *arrTarget) nextPtr() unsafe.Pointer {
	et := a.d.elem.typ
	if !a.lazy {
		a.lazy, a.capN = true, a.v.Cap()
		a.data = a.v.UnsafePointer()
	}
	if a.n == a.capN {
		a.v.SetLen(a.n)
		ns := reflect.MakeSlice(a.d.typ, a.n, max(4, 2*a.n))
		reflect.Copy(ns, a.v)
		a.v.Set(ns)
		a.fresh = true
		a.data, a.capN = a.v.UnsafePointer(), a.v.Cap()
	}
	ptr := unsafe.Add(a.data, uintptr(a.n)*et.Size())
	if !a.fresh {
		reflect.NewAt(et, ptr).Elem().SetZero() // reused backing array
	}
	return ptr
}

func (a *arrTarget) commit() {
	if a.mode == dIface || a.mode == dJSON {
		a.items = append(a.items, *a.slot)
	}
	a.n++
}

func (a *arrTarget) end(p *parser, col int) error {
	switch a.mode {
	case dSlice:
		if a.lazy {
			a.v.SetLen(a.n)
		}
		if a.v.IsNil() {
			a.v.Set(reflect.MakeSlice(a.d.typ, 0, 0))
		}
	case dArray:
		for i := a.n; i < a.v.Len(); i++ {
			a.v.Index(i).SetZero()
		}
	case dIface:
		a.v.Set(reflect.ValueOf(a.items))
	case dJSON:
		return p.unmarshalJSON(a.v, a.items, col)
	}
	return nil
}
