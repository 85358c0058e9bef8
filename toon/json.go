package toon

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
)

// FromJSON parses JSON text into TOON's generic model: objects become
// Object with their key order, numbers become exact Numbers. Duplicate keys
// resolve as JavaScript's JSON.parse does: the last value, in the first
// key's position. It is how the CLI turns JSON into TOON.
//
// Errors are *Error values naming the line and column in data.
func FromJSON(data []byte) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	v, err := readJSON(dec, 0)
	if err == nil {
		if _, err2 := dec.Token(); err2 != io.EOF {
			err = fmt.Errorf("%w: unexpected data after the value", ErrSyntax)
		}
	}
	if err != nil {
		off := dec.InputOffset()
		var se *json.SyntaxError
		if errors.As(err, &se) {
			off = se.Offset
		}
		if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
			err = errors.New("unexpected end of input")
		}
		sentinel := ErrSyntax
		if errors.Is(err, ErrDepth) {
			sentinel = ErrDepth
		}
		line, col := lineCol(data, off)
		return nil, &Error{Line: line, Column: col, Msg: "JSON: " + err.Error(), Err: sentinel}
	}
	return v, nil
}

// lineCol converts a byte offset into a 1-based line and column.
func lineCol(data []byte, off int64) (int, int) {
	off = min(max(off, 0), int64(len(data)))
	before := data[:off]
	line := bytes.Count(before, []byte{'\n'}) + 1
	return line, int(off) - (bytes.LastIndexByte(before, '\n') + 1) + 1
}

func readJSON(dec *json.Decoder, depth int) (any, error) {
	if depth > DefaultMaxDepth {
		return nil, fmt.Errorf("%w: more than %d levels", ErrDepth, DefaultMaxDepth)
	}
	tok, err := dec.Token()
	if err != nil {
		if errors.Is(err, io.EOF) {
			err = io.ErrUnexpectedEOF
		}
		return nil, err
	}
	switch t := tok.(type) {
	case json.Delim:
		switch t {
		case '{':
			var b objBuilder
			for dec.More() {
				kt, err := dec.Token()
				if err != nil {
					return nil, err
				}
				v, err := readJSON(dec, depth+1)
				if err != nil {
					return nil, err
				}
				b.set(kt.(string), v)
			}
			if _, err := dec.Token(); err != nil {
				return nil, err
			}
			return b.object(), nil
		case '[':
			a := []any{}
			for dec.More() {
				v, err := readJSON(dec, depth+1)
				if err != nil {
					return nil, err
				}
				a = append(a, v)
			}
			if _, err := dec.Token(); err != nil {
				return nil, err
			}
			return a, nil
		}
		return nil, fmt.Errorf("%w: unexpected %v", ErrSyntax, t)
	case json.Number:
		return canonicalNumber(string(t)), nil
	default: // nil, bool, string
		return t, nil
	}
}

// objBuilder collects members with last-write-wins on duplicate keys,
// switching from a linear scan to a map index for large objects.
type objBuilder struct {
	o   Object
	idx map[string]int
}

func (b *objBuilder) set(k string, v any) {
	if b.idx == nil && len(b.o) < 16 {
		b.o.set(k, v)
		return
	}
	if b.idx == nil {
		b.idx = make(map[string]int, 2*len(b.o))
		for i, m := range b.o {
			b.idx[m.Key] = i
		}
	}
	if i, ok := b.idx[k]; ok {
		b.o[i].Value = v
		return
	}
	b.idx[k] = len(b.o)
	b.o = append(b.o, Member{k, v})
}

// has reports whether k was set.

func (b *objBuilder) object() Object {
	if b.o == nil {
		return Object{}
	}
	return b.o
}

// ToJSON writes a generic value (as produced by decoding into an `any`, or
// any value Marshal accepts) as compact JSON, keeping Object key order and
// Number digits.
func ToJSON(v any) ([]byte, error) {
	n := normalizer{maxDepth: DefaultMaxDepth}
	x, err := n.any(v, 0)
	if err != nil {
		return nil, err
	}
	return appendJSON(nil, x), nil
}

func appendJSON(dst []byte, v any) []byte {
	switch v := v.(type) {
	case nil:
		return append(dst, "null"...)
	case bool:
		if v {
			return append(dst, "true"...)
		}
		return append(dst, "false"...)
	case Number:
		return append(dst, v...)
	case string:
		return appendJSONString(dst, v)
	case []any:
		dst = append(dst, '[')
		for i, e := range v {
			if i > 0 {
				dst = append(dst, ',')
			}
			dst = appendJSON(dst, e)
		}
		return append(dst, ']')
	case Object:
		dst = append(dst, '{')
		for i, m := range v {
			if i > 0 {
				dst = append(dst, ',')
			}
			dst = appendJSONString(dst, m.Key)
			dst = append(dst, ':')
			dst = appendJSON(dst, m.Value)
		}
		return append(dst, '}')
	}
	panic(fmt.Sprintf("toon: appendJSON on %T", v))
}

// appendJSONString quotes s for JSON without HTML escaping. TOON's quoted
// form (spec §7.1: \" \\ \n \r \t, \u00XX for other controls, U+FFFD for
// ill-formed UTF-8) is valid JSON with the same value, so it is shared.
func appendJSONString(dst []byte, s string) []byte { return appendQuoted(dst, s) }
