package payload

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"math"
	"reflect"
	"slices"
	"strconv"
	"time"

	"google.golang.org/protobuf/reflect/protoreflect"

	"github.com/wirebench/wirebench/codec"
	"github.com/wirebench/wirebench/toon"
)

// format is one wire format as the lab drives it: wirebench's own codec
// (package codec, as the server runs it), the Go value it is given, and
// how what it decodes is read back for the round-trip check.
type format struct {
	name    string
	library string
	codec   codec.Codec
	// how says what the format decodes into, for the report.
	how string
	// toGo makes the value the codec encodes from a sample; it runs once
	// per sample, outside the timed loops.
	toGo func(Value) (any, error)
	// decode decodes data into a fresh value and returns it.
	decode func(data []byte) (any, error)
	// back reads a decoded value as a Value for the comparison; backAll,
	// when set instead, gives several readings (protojson's two key
	// spellings) and the one closest to the sample is compared.
	back    func(any) (Value, error)
	backAll func(any) ([]Value, error)
	// intString: a 64-bit integer read back as a string of its digits is
	// the JSON mapping's spelling (protojson), not a change.
	intString bool
	// own is the library's own calls, timed beside the codec's.
	own *ownCodec
	// msg is the schema's message (protobuf), for the round trip's
	// comparison; nil for the schema-less formats.
	msg protoreflect.MessageDescriptor
}

// readBack gives the decoded value's readings.
func (f *format) readBack(x any) ([]Value, error) {
	if f.backAll != nil {
		return f.backAll(x)
	}
	v, err := f.back(x)
	return []Value{v}, err
}

// genericFormats are the schema-less formats: each encodes the value a Go
// program holding the sample without a schema has (maps, slices, int64
// for an integer that fits, float64 for any other number) and decodes
// into an `any`, as that program would. TOON gets its own ordered model
// (toon.Object, toon.Number), which the toon package offers for exactly
// this use.
func genericFormats() []*format {
	mk := func(name, library, how string) *format {
		c := codec.MustLookup(name).Codec
		return &format{
			name: name, library: library, codec: c, how: how,
			toGo: toGeneric,
			decode: func(data []byte) (any, error) {
				var v any
				err := c.Unmarshal(data, &v)
				return v, err
			},
			back: fromGo,
			own:  ownCodecFor(name),
		}
	}
	toonC := codec.MustLookup("toon").Codec
	return []*format{
		mk("json", "encoding/json", "map[string]any, numbers as float64"),
		mk("json-fast", "github.com/goccy/go-json", "map[string]any, numbers as float64"),
		{
			name: "toon", library: "wirebench/toon", codec: toonC,
			how:  "toon.Object (ordered), toon.Number (exact digits)",
			toGo: func(v Value) (any, error) { return toToon(v), nil },
			decode: func(data []byte) (any, error) {
				var v any
				err := toonC.Unmarshal(data, &v)
				return v, err
			},
			back: fromGo,
			own:  ownCodecFor("toon"),
		},
		mk("cbor", "github.com/fxamacker/cbor/v2", "map[any]any, int64/uint64 and float64"),
		mk("msgpack", "github.com/vmihailenco/msgpack/v5", "map[string]any, ints and float64"),
	}
}

// toGeneric is the schema-less Go value of a sample: objects as maps
// (which have no order), integers that fit as int64 (uint64 above it),
// other numbers as float64.
func toGeneric(v Value) (any, error) {
	switch v.Kind {
	case Null:
		return nil, nil
	case Bool:
		return v.Bool, nil
	case String:
		return v.Str, nil
	case Number:
		if isInteger(v.Str) {
			if i, err := strconv.ParseInt(v.Str, 10, 64); err == nil {
				return i, nil
			}
			if u, err := strconv.ParseUint(v.Str, 10, 64); err == nil {
				return u, nil
			}
		}
		f, err := strconv.ParseFloat(v.Str, 64)
		if err != nil && !math.IsInf(f, 0) {
			return nil, err
		}
		return f, nil
	case Array:
		a := make([]any, len(v.Arr))
		for i, e := range v.Arr {
			x, err := toGeneric(e)
			if err != nil {
				return nil, err
			}
			a[i] = x
		}
		return a, nil
	case Object:
		m := make(map[string]any, len(v.Obj))
		for _, mb := range v.Obj {
			x, err := toGeneric(mb.Val)
			if err != nil {
				return nil, err
			}
			m[mb.Key] = x
		}
		return m, nil
	}
	return nil, fmt.Errorf("payload: no Go value for a %v", v.Kind)
}

// isInteger reports a number token without fraction or exponent.
func isInteger(tok string) bool {
	for i := 0; i < len(tok); i++ {
		if c := tok[i]; c == '.' || c == 'e' || c == 'E' {
			return false
		}
	}
	return true
}

// toToon is a sample in TOON's generic model, keys in order, numbers as
// written (the encoder canonicalizes them, as the spec says).
func toToon(v Value) any {
	switch v.Kind {
	case Null:
		return nil
	case Bool:
		return v.Bool
	case String:
		return v.Str
	case Number:
		return toon.Number(v.Str)
	case Array:
		a := make([]any, len(v.Arr))
		for i, e := range v.Arr {
			a[i] = toToon(e)
		}
		return a
	case Object:
		o := make(toon.Object, 0, len(v.Obj))
		for _, m := range v.Obj {
			o = append(o, toon.Member{Key: m.Key, Value: toToon(m.Val)})
		}
		return o
	}
	return nil
}

var (
	bytesType = reflect.TypeFor[[]byte]()
)

// fromGo reads back whatever a decoder gave: maps (keys sorted, since a
// map has no order), slices, every integer and float type, []byte as a
// byte string, time.Time as a timestamp, and the toon and json models.
func fromGo(x any) (Value, error) {
	return fromReflect(reflect.ValueOf(x), 0)
}

func fromReflect(rv reflect.Value, depth int) (Value, error) {
	if depth > 10000 {
		return Value{}, fmt.Errorf("payload: decoded value nested too deep")
	}
	if !rv.IsValid() {
		return Value{}, nil
	}
	switch x := rv.Interface().(type) {
	case toon.Number:
		return Value{Kind: Number, Str: string(x)}, nil
	case json.Number:
		return Value{Kind: Number, Str: string(x)}, nil
	case toon.Object:
		o := Value{Kind: Object, Obj: make([]Member, 0, len(x))}
		for _, m := range x {
			e, err := fromReflect(reflect.ValueOf(m.Value), depth+1)
			if err != nil {
				return Value{}, err
			}
			o.Obj = append(o.Obj, Member{m.Key, e})
		}
		return o, nil
	case time.Time:
		return Value{Kind: Time, Str: x.Format(time.RFC3339Nano)}, nil
	}
	switch rv.Kind() {
	case reflect.Interface, reflect.Pointer:
		if rv.IsNil() {
			return Value{}, nil
		}
		return fromReflect(rv.Elem(), depth)
	case reflect.Bool:
		return Value{Kind: Bool, Bool: rv.Bool()}, nil
	case reflect.String:
		return Value{Kind: String, Str: rv.String()}, nil
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return Value{Kind: Number, Str: strconv.FormatInt(rv.Int(), 10)}, nil
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		return Value{Kind: Number, Str: strconv.FormatUint(rv.Uint(), 10)}, nil
	case reflect.Float32:
		return Value{Kind: Number, Str: formatFloat(rv.Float(), 32)}, nil
	case reflect.Float64:
		return Value{Kind: Number, Str: formatFloat(rv.Float(), 64)}, nil
	case reflect.Slice, reflect.Array:
		if rv.Type() == bytesType || rv.Type().Elem().Kind() == reflect.Uint8 && rv.Kind() == reflect.Slice {
			return Value{Kind: Bytes, Str: base64.StdEncoding.EncodeToString(rv.Bytes())}, nil
		}
		if rv.Kind() == reflect.Slice && rv.IsNil() {
			return Value{}, nil
		}
		a := Value{Kind: Array, Arr: make([]Value, rv.Len())}
		for i := range rv.Len() {
			e, err := fromReflect(rv.Index(i), depth+1)
			if err != nil {
				return Value{}, err
			}
			a.Arr[i] = e
		}
		return a, nil
	case reflect.Map:
		if rv.IsNil() {
			return Value{}, nil
		}
		o := Value{Kind: Object, Obj: make([]Member, 0, rv.Len())}
		it := rv.MapRange()
		for it.Next() {
			k := it.Key()
			for k.Kind() == reflect.Interface && !k.IsNil() {
				k = k.Elem()
			}
			key := fmt.Sprint(k.Interface())
			e, err := fromReflect(it.Value(), depth+1)
			if err != nil {
				return Value{}, err
			}
			o.Obj = append(o.Obj, Member{key, e})
		}
		slices.SortFunc(o.Obj, func(a, b Member) int {
			switch {
			case a.Key < b.Key:
				return -1
			case a.Key > b.Key:
				return 1
			}
			return 0
		})
		return o, nil
	}
	return Value{}, fmt.Errorf("payload: cannot read back a decoded %s", rv.Type())
}

// formatFloat spells a float as encoding/json does (ES6 number to
// string): the shortest digits that read back to the same float, fixed
// notation from 1e-6 to 1e21, exponent notation outside.
func formatFloat(f float64, bits int) string {
	if math.IsInf(f, 0) || math.IsNaN(f) {
		return strconv.FormatFloat(f, 'g', -1, bits) // +Inf, -Inf, NaN: not JSON
	}
	abs := math.Abs(f)
	fmtc := byte('f')
	if abs != 0 && (bits == 64 && (abs < 1e-6 || abs >= 1e21) || bits == 32 && (float32(abs) < 1e-6 || float32(abs) >= 1e21)) {
		fmtc = 'e'
	}
	b := strconv.AppendFloat(nil, f, fmtc, -1, bits)
	if fmtc == 'e' {
		// clean up e-09 to e-9
		n := len(b)
		if n >= 4 && b[n-4] == 'e' && b[n-3] == '-' && b[n-2] == '0' {
			b[n-2] = b[n-1]
			b = b[:n-1]
		}
	}
	return string(b)
}
