package grpcany

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	"google.golang.org/protobuf/reflect/protoreflect"
)

// Expect is one --expect check on each response message:
//
//	path==value   path!=value
//
// path is field names joined by dots (proto or JSON names), with [i] to
// index a repeated field: payload.body, items[0].id. value is a JSON
// literal ("x", 42, 1.5, true) or a bare word, which is an enum value's
// name or a string. An unset field compares as its default (0, "",
// false, the enum's first value), as proto3 reads it. Strings compare as
// strings, numbers as numbers, bytes by their base64 (protojson's form).
type Expect struct {
	Expr  string
	steps []step
	neg   bool
	want  any // string, float64, bool, or int32 (an enum's number)
	kind  protoreflect.Kind
}

type step struct {
	fd    protoreflect.FieldDescriptor
	index int // -1: not indexed
}

// ParseExpect compiles expr against the response message md.
func ParseExpect(expr string, md protoreflect.MessageDescriptor) (*Expect, error) {
	e := &Expect{Expr: expr}
	path, val, ok := strings.Cut(expr, "!=")
	e.neg = ok
	if !ok {
		path, val, ok = strings.Cut(expr, "==")
	}
	if !ok {
		return nil, fmt.Errorf("%w: --expect %q: want path==value or path!=value", ErrOptions, expr)
	}
	path, val = strings.TrimSpace(path), strings.TrimSpace(val)
	cur := md
	for _, part := range strings.Split(path, ".") {
		name, idx := part, -1
		if i := strings.IndexByte(part, '['); i > 0 && strings.HasSuffix(part, "]") {
			n, err := strconv.Atoi(part[i+1 : len(part)-1])
			if err != nil || n < 0 {
				return nil, fmt.Errorf("%w: --expect %q: bad index in %q", ErrOptions, expr, part)
			}
			name, idx = part[:i], n
		}
		if cur == nil {
			return nil, fmt.Errorf("%w: --expect %q: %s is not a message field", ErrOptions, expr, name)
		}
		fd := cur.Fields().ByName(protoreflect.Name(name))
		if fd == nil {
			fd = cur.Fields().ByJSONName(name)
		}
		if fd == nil {
			return nil, fmt.Errorf("%w: --expect %q: %s has no field %s", ErrOptions, expr, cur.FullName(), name)
		}
		if fd.IsMap() || (fd.IsList() != (idx >= 0)) {
			return nil, fmt.Errorf("%w: --expect %q: %s: index a repeated field ([i]), and only that", ErrOptions, expr, name)
		}
		e.steps = append(e.steps, step{fd: fd, index: idx})
		cur = fd.Message()
	}
	last := e.steps[len(e.steps)-1].fd
	e.kind = last.Kind()
	var lit any
	if err := json.Unmarshal([]byte(val), &lit); err != nil {
		lit = val // a bare word
	}
	bad := func() (*Expect, error) {
		return nil, fmt.Errorf("%w: --expect %q: %s is %s, not comparable with %s", ErrOptions, expr, last.Name(), e.kind, val)
	}
	switch e.kind {
	case protoreflect.MessageKind, protoreflect.GroupKind:
		return nil, fmt.Errorf("%w: --expect %q: %s is a message: compare one of its fields", ErrOptions, expr, last.Name())
	case protoreflect.StringKind, protoreflect.BytesKind:
		s, ok := lit.(string)
		if !ok {
			return bad()
		}
		e.want = s
	case protoreflect.BoolKind:
		b, ok := lit.(bool)
		if !ok {
			return bad()
		}
		e.want = b
	case protoreflect.EnumKind:
		switch v := lit.(type) {
		case string:
			ev := last.Enum().Values().ByName(protoreflect.Name(v))
			if ev == nil {
				return nil, fmt.Errorf("%w: --expect %q: %s has no value %s", ErrOptions, expr, last.Enum().FullName(), v)
			}
			e.want = int32(ev.Number())
		case float64:
			e.want = int32(v)
		default:
			return bad()
		}
	default: // numbers; "12" from a JSON string too, as protojson writes 64-bit integers
		switch v := lit.(type) {
		case float64:
			e.want = v
		case string:
			f, err := strconv.ParseFloat(v, 64)
			if err != nil {
				return bad()
			}
			e.want = f
		default:
			return bad()
		}
	}
	return e, nil
}

// Check reports whether m passes.
func (e *Expect) Check(m protoreflect.Message) bool {
	var v protoreflect.Value
	for i, s := range e.steps {
		if m == nil { // an unset message on the way: the field's default
			return e.neg != e.equal(e.steps[len(e.steps)-1].fd.Default())
		}
		if s.index >= 0 {
			l := m.Get(s.fd).List()
			if s.index >= l.Len() {
				return e.neg // a missing element equals nothing
			}
			v = l.Get(s.index)
		} else {
			v = m.Get(s.fd)
		}
		if i < len(e.steps)-1 {
			m = nil
			if v.IsValid() {
				m = v.Message()
			}
		}
	}
	return e.neg != e.equal(v)
}

func (e *Expect) equal(v protoreflect.Value) bool {
	switch e.kind {
	case protoreflect.StringKind:
		return v.String() == e.want
	case protoreflect.BytesKind:
		return base64.StdEncoding.EncodeToString(v.Bytes()) == e.want
	case protoreflect.BoolKind:
		return v.Bool() == e.want
	case protoreflect.EnumKind:
		return int32(v.Enum()) == e.want
	case protoreflect.FloatKind, protoreflect.DoubleKind:
		return v.Float() == e.want
	case protoreflect.Uint32Kind, protoreflect.Uint64Kind, protoreflect.Fixed32Kind, protoreflect.Fixed64Kind:
		return float64(v.Uint()) == e.want
	}
	return float64(v.Int()) == e.want
}
