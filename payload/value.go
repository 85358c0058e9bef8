// Package payload is the payload lab: it measures every wire format
// wirebench speaks on the user's own sample payloads — bytes per message,
// raw and compressed, encode and decode cost, and whether a round trip
// through the format gives back the same data, naming what changed when
// it does not. docs/payload.md.
package payload

import (
	"strconv"
	"strings"
)

// Kind is the JSON type of a Value, plus the types a decoder may give
// back that JSON has not (bytes, timestamps).
type Kind uint8

// Kinds of Value.
const (
	Null Kind = iota
	Bool
	Number
	String
	Array
	Object
	// Bytes is a byte string a decoder gave back; Str holds it in
	// standard base64, as encoding/json would write it.
	Bytes
	// Time is a timestamp a decoder gave back; Str holds it in RFC 3339
	// with nanoseconds.
	Time
)

var kindNames = [...]string{"null", "bool", "number", "string", "array", "object", "byte string", "timestamp"}

func (k Kind) String() string {
	if int(k) < len(kindNames) {
		return kindNames[k]
	}
	return "kind(" + strconv.Itoa(int(k)) + ")"
}

// Value is one JSON value kept exactly as written: object members in
// their order (duplicates too), numbers as their token, so that a round
// trip can be compared with the input and not with a decoder's idea of it.
type Value struct {
	Kind Kind
	Bool bool
	// Str is a string's value, a number's token, or Bytes and Time as
	// described there.
	Str string
	Arr []Value
	Obj []Member
}

// Member is one key of an object and its value.
type Member struct {
	Key string
	Val Value
}

// appendJSON writes v as compact JSON with its keys in order and its
// numbers as written: the form `jq -c` gives (strings re-escaped).
func appendJSON(dst []byte, v Value) []byte {
	switch v.Kind {
	case Null:
		return append(dst, "null"...)
	case Bool:
		return strconv.AppendBool(dst, v.Bool)
	case Number:
		return append(dst, v.Str...)
	case String, Bytes, Time:
		return appendString(dst, v.Str)
	case Array:
		dst = append(dst, '[')
		for i, e := range v.Arr {
			if i > 0 {
				dst = append(dst, ',')
			}
			dst = appendJSON(dst, e)
		}
		return append(dst, ']')
	case Object:
		dst = append(dst, '{')
		for i, m := range v.Obj {
			if i > 0 {
				dst = append(dst, ',')
			}
			dst = appendString(dst, m.Key)
			dst = append(dst, ':')
			dst = appendJSON(dst, m.Val)
		}
		return append(dst, '}')
	}
	return dst
}

const hexDigits = "0123456789abcdef"

// appendString quotes s as jq does: `"` and `\` escaped, \b \f \n \r
// \t by name, the other control characters and DEL as \u00XX, everything
// else (`<`, `&`, U+2028, any non-ASCII) as it is, with no HTML escaping.
func appendString(dst []byte, s string) []byte {
	dst = append(dst, '"')
	start := 0
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c >= 0x20 && c != '"' && c != '\\' && c != 0x7f {
			continue
		}
		dst = append(dst, s[start:i]...)
		start = i + 1
		switch c {
		case '"', '\\':
			dst = append(dst, '\\', c)
		case '\b':
			dst = append(dst, '\\', 'b')
		case '\f':
			dst = append(dst, '\\', 'f')
		case '\n':
			dst = append(dst, '\\', 'n')
		case '\r':
			dst = append(dst, '\\', 'r')
		case '\t':
			dst = append(dst, '\\', 't')
		default:
			dst = append(dst, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&15])
		}
	}
	dst = append(dst, s[start:]...)
	return append(dst, '"')
}

// short shows a value in an error or a change, cut to a readable length.
func short(v Value) string {
	var s string
	switch v.Kind {
	case String, Bytes, Time:
		s = strconv.Quote(v.Str)
	case Array, Object:
		s = string(appendJSON(nil, v))
	default:
		s = string(appendJSON(nil, v))
	}
	return cut(s, 60)
}

func cut(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return strings.ToValidUTF8(s[:n], "") + "…"
}
