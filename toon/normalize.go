package toon

import (
	"encoding"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"math"
	"reflect"
	"slices"
	"strconv"
	"time"
)

var (
	timeType            = reflect.TypeFor[time.Time]()
	numberType          = reflect.TypeFor[Number]()
	objectType          = reflect.TypeFor[Object]()
	jsonNumberType      = reflect.TypeFor[json.Number]()
	textMarshalerType   = reflect.TypeFor[encoding.TextMarshaler]()
	textUnmarshalerType = reflect.TypeFor[encoding.TextUnmarshaler]()
	jsonMarshalerType   = reflect.TypeFor[json.Marshaler]()
	jsonUnmarshalerType = reflect.TypeFor[json.Unmarshaler]()
)

// normalizer turns arbitrary Go values into the generic data model (spec
// §3 "host-type normalization"): nil, bool, string, Number, Object, []any.
type normalizer struct {
	maxDepth int
}

func (n *normalizer) value(v reflect.Value, depth int) (any, error) {
	if depth > n.maxDepth {
		return nil, fmt.Errorf("toon: %w: more than %d levels (cyclic value?)", ErrDepth, n.maxDepth)
	}
	if !v.IsValid() {
		return nil, nil
	}
	t := v.Type()
	switch t {
	case timeType:
		return formatTime(v.Interface().(time.Time)), nil
	case numberType:
		s := v.String()
		if !isJSONNumber(s) {
			return nil, fmt.Errorf("toon: %w: invalid Number %q", ErrType, s)
		}
		return canonicalNumber(s), nil
	case jsonNumberType:
		s := v.String()
		if s == "" {
			s = "0"
		}
		if !isJSONNumber(s) {
			return nil, fmt.Errorf("toon: %w: invalid json.Number %q", ErrType, s)
		}
		return canonicalNumber(s), nil
	case objectType:
		o := v.Interface().(Object)
		if o == nil {
			return Object{}, nil
		}
		out := make(Object, len(o))
		for i, m := range o {
			x, err := n.any(m.Value, depth+1)
			if err != nil {
				return nil, err
			}
			out[i] = Member{m.Key, x}
		}
		return out, nil
	}
	if t.Kind() != reflect.Pointer && t.Kind() != reflect.Interface {
		if t.Implements(jsonMarshalerType) {
			return n.marshalJSON(v, depth)
		}
		if t.Implements(textMarshalerType) {
			return n.marshalText(v)
		}
		if v.CanAddr() {
			if pt := reflect.PointerTo(t); pt.Implements(jsonMarshalerType) {
				return n.marshalJSON(v.Addr(), depth)
			} else if pt.Implements(textMarshalerType) {
				return n.marshalText(v.Addr())
			}
		}
	}
	switch t.Kind() {
	case reflect.Bool:
		return v.Bool(), nil
	case reflect.String:
		return v.String(), nil
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return Number(strconv.FormatInt(v.Int(), 10)), nil
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		return Number(strconv.FormatUint(v.Uint(), 10)), nil
	case reflect.Float32, reflect.Float64:
		f := v.Float()
		if math.IsNaN(f) || math.IsInf(f, 0) {
			return nil, nil
		}
		bits := 64
		if t.Kind() == reflect.Float32 {
			bits = 32
		}
		return Number(appendFloat(nil, f, bits)), nil
	case reflect.Pointer, reflect.Interface:
		if v.IsNil() {
			return nil, nil
		}
		if t.Kind() == reflect.Pointer && t.Implements(jsonMarshalerType) {
			return n.marshalJSON(v, depth)
		}
		if t.Kind() == reflect.Pointer && t.Implements(textMarshalerType) {
			return n.marshalText(v)
		}
		if t.Kind() == reflect.Interface {
			// An interface is no level of the document: []any{[]any{}}
			// is two levels deep, as the decoder counts, not four
			// (toon encode refused 500-deep arrays the reader accepts).
			return n.value(v.Elem(), depth)
		}
		return n.value(v.Elem(), depth+1) // pointers count, which bounds cycles
	case reflect.Slice:
		if v.IsNil() {
			return nil, nil
		}
		if t.Elem().Kind() == reflect.Uint8 && !reflect.PointerTo(t.Elem()).Implements(textMarshalerType) {
			return base64.StdEncoding.EncodeToString(v.Bytes()), nil
		}
		fallthrough
	case reflect.Array:
		if depth >= n.maxDepth { // the decoder counts an array as a level, even an empty one
			return nil, fmt.Errorf("toon: %w: more than %d levels (cyclic value?)", ErrDepth, n.maxDepth)
		}
		out := make([]any, v.Len())
		for i := range out {
			x, err := n.value(v.Index(i), depth+1)
			if err != nil {
				return nil, err
			}
			out[i] = x
		}
		return out, nil
	case reflect.Map:
		if v.IsNil() {
			return nil, nil
		}
		return n.mapValue(v, depth)
	case reflect.Struct:
		si := cachedStruct(t)
		out := make(Object, 0, len(si.fields))
		for i := range si.fields {
			f := &si.fields[i]
			fv := fieldByIndex(v, f.index)
			if f.omitEmpty && isEmptyValue(fv) {
				continue
			}
			x, err := n.value(fv, depth+1)
			if err != nil {
				return nil, err
			}
			out = append(out, Member{f.name, x})
		}
		return out, nil
	}
	return nil, fmt.Errorf("toon: %w: cannot encode %s", ErrType, t)
}

// any normalizes a value already held in an interface.
func (n *normalizer) any(x any, depth int) (any, error) {
	switch x := x.(type) {
	case nil, bool, string:
		return x, nil
	case Number:
		if !isJSONNumber(string(x)) {
			return nil, fmt.Errorf("toon: %w: invalid Number %q", ErrType, string(x))
		}
		return canonicalNumber(string(x)), nil
	case []any:
		if x == nil {
			return nil, nil
		}
		if depth >= n.maxDepth { // the decoder counts an array as a level, even an empty one
			return nil, fmt.Errorf("toon: %w: more than %d levels", ErrDepth, n.maxDepth)
		}
		out := make([]any, len(x))
		for i, e := range x {
			y, err := n.any(e, depth+1)
			if err != nil {
				return nil, err
			}
			out[i] = y
		}
		return out, nil
	}
	return n.value(reflect.ValueOf(x), depth)
}

func (n *normalizer) mapValue(v reflect.Value, depth int) (any, error) {
	type kv struct {
		k string
		v reflect.Value
	}
	entries := make([]kv, 0, v.Len())
	iter := v.MapRange()
	for iter.Next() {
		k, err := mapKeyString(iter.Key())
		if err != nil {
			return nil, err
		}
		entries = append(entries, kv{k, iter.Value()})
	}
	slices.SortFunc(entries, func(a, b kv) int {
		switch {
		case a.k < b.k:
			return -1
		case a.k > b.k:
			return 1
		}
		return 0
	})
	out := make(Object, len(entries))
	for i, e := range entries {
		x, err := n.value(e.v, depth+1)
		if err != nil {
			return nil, err
		}
		out[i] = Member{e.k, x}
	}
	return out, nil
}

func mapKeyString(k reflect.Value) (string, error) {
	if k.Kind() == reflect.String {
		return k.String(), nil
	}
	if tm, ok := k.Interface().(encoding.TextMarshaler); ok {
		b, err := tm.MarshalText()
		return string(b), err
	}
	switch k.Kind() {
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return strconv.FormatInt(k.Int(), 10), nil
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		return strconv.FormatUint(k.Uint(), 10), nil
	}
	return "", fmt.Errorf("toon: %w: unsupported map key type %s", ErrType, k.Type())
}

func (n *normalizer) marshalText(v reflect.Value) (any, error) {
	b, err := v.Interface().(encoding.TextMarshaler).MarshalText()
	if err != nil {
		return nil, fmt.Errorf("toon: %w: %v", ErrType, err)
	}
	return string(b), nil
}

func (n *normalizer) marshalJSON(v reflect.Value, depth int) (any, error) {
	b, err := v.Interface().(json.Marshaler).MarshalJSON()
	if err != nil {
		return nil, fmt.Errorf("toon: %w: %v", ErrType, err)
	}
	x, err := FromJSON(b)
	if err != nil {
		return nil, fmt.Errorf("toon: %w: MarshalJSON of %s: %v", ErrType, v.Type(), err)
	}
	return n.any(x, depth)
}

// formatTime formats t as RFC 3339 with nanoseconds.
func formatTime(t time.Time) string { return string(appendTime(nil, t)) }
