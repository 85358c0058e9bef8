package codec

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"sync"
	"unicode/utf8"

	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
)

// marshalInOrder encodes a message that has no generated fast path
// (dynamicpb: a schema read at run time) the way protoc and the C++
// library do: every field in field-number order, oneof members and
// extensions among the others, map entries sorted by key, unknown fields
// last. proto.Marshal walks such a message in its map's order, and even
// deterministically writes oneof members after the other fields, so its
// bytes are the same size as protoc's but not the same bytes.
func marshalInOrder(m proto.Message) ([]byte, error) {
	r := m.ProtoReflect()
	if !r.IsValid() {
		return nil, nil
	}
	if needsInitCheck(r.Descriptor()) {
		if err := proto.CheckInitialized(m); err != nil {
			return nil, err
		}
	}
	e := orderedPool.Get().(*orderedEncoder)
	b, err := e.message(make([]byte, 0, 64), r)
	e.fields = e.fields[:0]
	orderedPool.Put(e)
	return b, err
}

// orderedEncoder holds the fields of the messages being written, one
// segment per level of nesting, so a message's fields are sorted without
// an allocation. visit is its collect method, bound once.
type orderedEncoder struct {
	fields []fieldValue
	visit  func(protoreflect.FieldDescriptor, protoreflect.Value) bool
}

type fieldValue struct {
	fd protoreflect.FieldDescriptor
	v  protoreflect.Value
}

var orderedPool = sync.Pool{New: func() any {
	e := &orderedEncoder{}
	e.visit = func(fd protoreflect.FieldDescriptor, v protoreflect.Value) bool {
		e.fields = append(e.fields, fieldValue{fd, v})
		return true
	}
	return e
}}

func (e *orderedEncoder) message(b []byte, m protoreflect.Message) ([]byte, error) {
	start := len(e.fields)
	m.Range(e.visit)
	seg := e.fields[start:]
	if !slices.IsSortedFunc(seg, byNumber) {
		slices.SortFunc(seg, byNumber)
	}
	var err error
	for i := start; i < len(e.fields); i++ {
		// e.fields may grow (and move) while a nested message is written.
		f := e.fields[i]
		if b, err = e.field(b, f.fd, f.v); err != nil {
			return b, err
		}
	}
	clear(e.fields[start:])
	e.fields = e.fields[:start]
	return append(b, m.GetUnknown()...), nil
}

func byNumber(a, b fieldValue) int { return cmp.Compare(a.fd.Number(), b.fd.Number()) }

func (e *orderedEncoder) field(b []byte, fd protoreflect.FieldDescriptor, v protoreflect.Value) ([]byte, error) {
	switch {
	case fd.IsList():
		l := v.List()
		n := l.Len()
		if n == 0 {
			return b, nil
		}
		var err error
		if fd.IsPacked() {
			b = protowire.AppendTag(b, fd.Number(), protowire.BytesType)
			pos := len(b)
			b = append(b, 0)
			for i := range n {
				if b, err = e.value(b, fd, l.Get(i)); err != nil {
					return b, err
				}
			}
			return finishLength(b, pos), nil
		}
		wt := wireType(fd.Kind())
		for i := range n {
			b = protowire.AppendTag(b, fd.Number(), wt)
			if b, err = e.value(b, fd, l.Get(i)); err != nil {
				return b, err
			}
		}
		return b, nil
	case fd.IsMap():
		return e.mapField(b, fd, v.Map())
	}
	b = protowire.AppendTag(b, fd.Number(), wireType(fd.Kind()))
	return e.value(b, fd, v)
}

// mapField writes a map's entries sorted by key, each with its key and
// its value (both always written, as every protobuf library does).
func (e *orderedEncoder) mapField(b []byte, fd protoreflect.FieldDescriptor, m protoreflect.Map) ([]byte, error) {
	if m.Len() == 0 {
		return b, nil
	}
	keys := make([]protoreflect.MapKey, 0, m.Len())
	m.Range(func(k protoreflect.MapKey, _ protoreflect.Value) bool {
		keys = append(keys, k)
		return true
	})
	kd, vd := fd.MapKey(), fd.MapValue()
	sortKeys(keys, kd.Kind())
	var err error
	for _, k := range keys {
		b = protowire.AppendTag(b, fd.Number(), protowire.BytesType)
		pos := len(b)
		b = append(b, 0)
		b = protowire.AppendTag(b, 1, wireType(kd.Kind()))
		if b, err = e.value(b, kd, k.Value()); err != nil {
			return b, err
		}
		b = protowire.AppendTag(b, 2, wireType(vd.Kind()))
		if b, err = e.value(b, vd, m.Get(k)); err != nil {
			return b, err
		}
		b = finishLength(b, pos)
	}
	return b, nil
}

// sortKeys orders map keys as proto.MarshalOptions{Deterministic: true}
// does: false before true, numbers by value, strings by their bytes.
func sortKeys(keys []protoreflect.MapKey, k protoreflect.Kind) {
	switch k {
	case protoreflect.BoolKind:
		slices.SortFunc(keys, func(a, b protoreflect.MapKey) int {
			return cmp.Compare(protowire.EncodeBool(a.Bool()), protowire.EncodeBool(b.Bool()))
		})
	case protoreflect.StringKind:
		slices.SortFunc(keys, func(a, b protoreflect.MapKey) int { return cmp.Compare(a.String(), b.String()) })
	case protoreflect.Uint32Kind, protoreflect.Uint64Kind, protoreflect.Fixed32Kind, protoreflect.Fixed64Kind:
		slices.SortFunc(keys, func(a, b protoreflect.MapKey) int { return cmp.Compare(a.Uint(), b.Uint()) })
	default:
		slices.SortFunc(keys, func(a, b protoreflect.MapKey) int { return cmp.Compare(a.Int(), b.Int()) })
	}
}

// value writes one value of fd's kind, without its tag.
func (e *orderedEncoder) value(b []byte, fd protoreflect.FieldDescriptor, v protoreflect.Value) ([]byte, error) {
	switch fd.Kind() {
	case protoreflect.BoolKind:
		return protowire.AppendVarint(b, protowire.EncodeBool(v.Bool())), nil
	case protoreflect.EnumKind:
		return protowire.AppendVarint(b, uint64(v.Enum())), nil
	case protoreflect.Int32Kind, protoreflect.Int64Kind:
		return protowire.AppendVarint(b, uint64(v.Int())), nil
	case protoreflect.Sint32Kind:
		return protowire.AppendVarint(b, protowire.EncodeZigZag(int64(int32(v.Int())))), nil
	case protoreflect.Sint64Kind:
		return protowire.AppendVarint(b, protowire.EncodeZigZag(v.Int())), nil
	case protoreflect.Uint32Kind, protoreflect.Uint64Kind:
		return protowire.AppendVarint(b, v.Uint()), nil
	case protoreflect.Sfixed32Kind:
		return protowire.AppendFixed32(b, uint32(v.Int())), nil
	case protoreflect.Fixed32Kind:
		return protowire.AppendFixed32(b, uint32(v.Uint())), nil
	case protoreflect.FloatKind:
		return protowire.AppendFixed32(b, math.Float32bits(float32(v.Float()))), nil
	case protoreflect.Sfixed64Kind:
		return protowire.AppendFixed64(b, uint64(v.Int())), nil
	case protoreflect.Fixed64Kind:
		return protowire.AppendFixed64(b, v.Uint()), nil
	case protoreflect.DoubleKind:
		return protowire.AppendFixed64(b, math.Float64bits(v.Float())), nil
	case protoreflect.StringKind:
		s := v.String()
		if checksUTF8(fd) && !utf8.ValidString(s) {
			return b, fmt.Errorf("string field %s contains invalid UTF-8", fd.FullName())
		}
		return protowire.AppendString(b, s), nil
	case protoreflect.BytesKind:
		return protowire.AppendBytes(b, v.Bytes()), nil
	case protoreflect.MessageKind:
		pos := len(b)
		b = append(b, 0)
		b, err := e.message(b, v.Message())
		return finishLength(b, pos), err
	case protoreflect.GroupKind:
		b, err := e.message(b, v.Message())
		return protowire.AppendTag(b, fd.Number(), protowire.EndGroupType), err
	}
	return b, fmt.Errorf("invalid kind %v of field %s", fd.Kind(), fd.FullName())
}

// finishLength writes the length of what follows b[pos] (one byte kept
// for it, enough for the lengths under 128 of most nested messages) into
// its place, moving the bytes when the length needs more.
func finishLength(b []byte, pos int) []byte {
	n := len(b) - pos - 1
	size := protowire.SizeVarint(uint64(n))
	if size > 1 {
		b = append(b, make([]byte, size-1)...)
		copy(b[pos+size:], b[pos+1:pos+1+n])
	}
	protowire.AppendVarint(b[:pos], uint64(n))
	return b
}

// checksUTF8 says whether the library refuses invalid UTF-8 in fd: in
// proto3 strings and those of editions (whose default is to verify).
func checksUTF8(fd protoreflect.FieldDescriptor) bool {
	return fd.ParentFile() == nil || fd.ParentFile().Syntax() != protoreflect.Proto2
}

func wireType(k protoreflect.Kind) protowire.Type {
	switch k {
	case protoreflect.Sfixed32Kind, protoreflect.Fixed32Kind, protoreflect.FloatKind:
		return protowire.Fixed32Type
	case protoreflect.Sfixed64Kind, protoreflect.Fixed64Kind, protoreflect.DoubleKind:
		return protowire.Fixed64Type
	case protoreflect.StringKind, protoreflect.BytesKind, protoreflect.MessageKind:
		return protowire.BytesType
	case protoreflect.GroupKind:
		return protowire.StartGroupType
	}
	return protowire.VarintType
}

// initChecks caches, per message type, whether it or a message it holds
// has required fields (proto2), which proto.Marshal checks are set.
var initChecks sync.Map // protoreflect.MessageDescriptor → bool

func needsInitCheck(md protoreflect.MessageDescriptor) bool {
	if v, ok := initChecks.Load(md); ok {
		return v.(bool)
	}
	need := hasRequired(md, map[protoreflect.FullName]bool{})
	initChecks.Store(md, need)
	return need
}

func hasRequired(md protoreflect.MessageDescriptor, seen map[protoreflect.FullName]bool) bool {
	if seen[md.FullName()] {
		return false
	}
	seen[md.FullName()] = true
	if md.RequiredNumbers().Len() > 0 || md.ExtensionRanges().Len() > 0 {
		// An extension may be a message with required fields.
		return true
	}
	fields := md.Fields()
	for i := range fields.Len() {
		if sub := fields.Get(i).Message(); sub != nil && hasRequired(sub, seen) {
			return true
		}
	}
	return false
}
