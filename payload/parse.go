package payload

import (
	"bytes"
	"errors"
	"fmt"
	"strconv"
	"unicode/utf16"
	"unicode/utf8"
)

// ErrInput is input the lab cannot read: malformed JSON, a sample over a
// limit, an unknown file kind, a schema that does not fit the data. Each
// error wrapping it names the file and the place.
var ErrInput = errors.New("bad input")

// errSchema is a sample the protobuf schema cannot read.
var errSchema = errors.New("schema")

// parser reads one JSON value from a byte slice into a Value, iteratively
// bounded by maxDepth: a hand-written parser because encoding/json gives
// neither the numbers' tokens nor the keys' order nor duplicate keys.
type parser struct {
	data     []byte
	pos      int
	maxDepth int
	buf      []byte // a string with escapes, decoded
}

// parseValue parses data, one JSON value with optional surrounding
// whitespace. Errors carry the byte offset within data.
func parseValue(data []byte, maxDepth int) (Value, error) {
	p := parser{data: data, maxDepth: maxDepth}
	p.ws()
	v, err := p.value(0)
	if err != nil {
		return Value{}, err
	}
	p.ws()
	if p.pos < len(p.data) {
		return Value{}, p.errorf("data after the value")
	}
	return v, nil
}

// syntaxError is a parse error at a byte offset of the parsed slice.
type syntaxError struct {
	Off int
	Msg string
}

func (e *syntaxError) Error() string { return fmt.Sprintf("%s at byte %d", e.Msg, e.Off) }

func (p *parser) errorf(format string, a ...any) error {
	return &syntaxError{Off: p.pos, Msg: fmt.Sprintf(format, a...)}
}

func (p *parser) ws() {
	for p.pos < len(p.data) {
		switch p.data[p.pos] {
		case ' ', '\t', '\n', '\r':
			p.pos++
		default:
			return
		}
	}
}

func (p *parser) value(depth int) (Value, error) {
	if p.pos >= len(p.data) {
		return Value{}, p.errorf("unexpected end of input")
	}
	switch c := p.data[p.pos]; {
	case c == '{':
		return p.object(depth + 1)
	case c == '[':
		return p.array(depth + 1)
	case c == '"':
		s, err := p.str()
		return Value{Kind: String, Str: s}, err
	case c == '-' || c >= '0' && c <= '9':
		tok, err := p.number()
		return Value{Kind: Number, Str: string(tok)}, err
	case bytes.HasPrefix(p.data[p.pos:], []byte("true")):
		p.pos += 4
		return Value{Kind: Bool, Bool: true}, nil
	case bytes.HasPrefix(p.data[p.pos:], []byte("false")):
		p.pos += 5
		return Value{Kind: Bool}, nil
	case bytes.HasPrefix(p.data[p.pos:], []byte("null")):
		p.pos += 4
		return Value{}, nil
	default:
		return Value{}, p.errorf("unexpected %s", quoteByte(c))
	}
}

func quoteByte(c byte) string {
	if c >= 0x20 && c < 0x7f {
		return strconv.QuoteRune(rune(c))
	}
	return fmt.Sprintf("byte 0x%02x", c)
}

func (p *parser) deeper(depth int) error {
	if depth > p.maxDepth {
		return p.errorf("nesting deeper than %d levels", p.maxDepth)
	}
	return nil
}

// The depth of a document is bounded (maxDepth, at most a few hundred),
// so recursion here is bounded too.
func (p *parser) object(depth int) (Value, error) {
	if err := p.deeper(depth); err != nil {
		return Value{}, err
	}
	p.pos++ // {
	v := Value{Kind: Object, Obj: []Member{}}
	p.ws()
	if p.pos < len(p.data) && p.data[p.pos] == '}' {
		p.pos++
		return v, nil
	}
	for {
		p.ws()
		if p.pos >= len(p.data) || p.data[p.pos] != '"' {
			return Value{}, p.errorf("want a member name")
		}
		k, err := p.str()
		if err != nil {
			return Value{}, err
		}
		p.ws()
		if p.pos >= len(p.data) || p.data[p.pos] != ':' {
			return Value{}, p.errorf("want ':' after a member name")
		}
		p.pos++
		p.ws()
		e, err := p.value(depth)
		if err != nil {
			return Value{}, err
		}
		v.Obj = append(v.Obj, Member{k, e})
		p.ws()
		if p.pos >= len(p.data) {
			return Value{}, p.errorf("unexpected end of input in an object")
		}
		switch p.data[p.pos] {
		case ',':
			p.pos++
		case '}':
			p.pos++
			return v, nil
		default:
			return Value{}, p.errorf("want ',' or '}' in an object, got %s", quoteByte(p.data[p.pos]))
		}
	}
}

func (p *parser) array(depth int) (Value, error) {
	if err := p.deeper(depth); err != nil {
		return Value{}, err
	}
	p.pos++ // [
	v := Value{Kind: Array, Arr: []Value{}}
	p.ws()
	if p.pos < len(p.data) && p.data[p.pos] == ']' {
		p.pos++
		return v, nil
	}
	for {
		p.ws()
		e, err := p.value(depth)
		if err != nil {
			return Value{}, err
		}
		v.Arr = append(v.Arr, e)
		p.ws()
		if p.pos >= len(p.data) {
			return Value{}, p.errorf("unexpected end of input in an array")
		}
		switch p.data[p.pos] {
		case ',':
			p.pos++
		case ']':
			p.pos++
			return v, nil
		default:
			return Value{}, p.errorf("want ',' or ']' in an array, got %s", quoteByte(p.data[p.pos]))
		}
	}
}

// number returns the token as written, after checking RFC 8259's grammar.
func (p *parser) number() ([]byte, error) {
	start := p.pos
	d := p.data
	i := p.pos
	if i < len(d) && d[i] == '-' {
		i++
	}
	switch {
	case i < len(d) && d[i] == '0':
		i++
	case i < len(d) && d[i] >= '1' && d[i] <= '9':
		for i < len(d) && d[i] >= '0' && d[i] <= '9' {
			i++
		}
	default:
		p.pos = i
		return nil, p.errorf("malformed number")
	}
	if i < len(d) && d[i] == '.' {
		i++
		j := i
		for i < len(d) && d[i] >= '0' && d[i] <= '9' {
			i++
		}
		if i == j {
			p.pos = i
			return nil, p.errorf("malformed number: no digit after '.'")
		}
	}
	if i < len(d) && (d[i] == 'e' || d[i] == 'E') {
		i++
		if i < len(d) && (d[i] == '+' || d[i] == '-') {
			i++
		}
		j := i
		for i < len(d) && d[i] >= '0' && d[i] <= '9' {
			i++
		}
		if i == j {
			p.pos = i
			return nil, p.errorf("malformed number: no digit in the exponent")
		}
	}
	p.pos = i
	return d[start:i], nil
}

// str reads a string, decoding escapes.
func (p *parser) str() (string, error) {
	b, err := p.strBytes()
	return string(b), err
}

// strBytes reads a string, decoding escapes: a slice of the input, or of
// p.buf when it has escapes (valid until the next call). Invalid UTF-8 is
// an error: every format here would either refuse it or replace it, and
// the lab would then report a change the input itself caused.
func (p *parser) strBytes() ([]byte, error) {
	p.pos++ // "
	d := p.data
	start := p.pos
	// Fast path: no escapes.
	for i := start; i < len(d); i++ {
		c := d[i]
		if c == '"' {
			if !utf8.Valid(d[start:i]) {
				p.pos = start
				return nil, p.errorf("invalid UTF-8 in a string")
			}
			p.pos = i + 1
			return d[start:i], nil
		}
		if c == '\\' || c < 0x20 {
			break
		}
	}
	b := p.buf[:0]
	i := start
	for {
		if i >= len(d) {
			p.pos = i
			return nil, p.errorf("unexpected end of input in a string")
		}
		c := d[i]
		switch {
		case c == '"':
			if !utf8.Valid(b) {
				p.pos = start
				return nil, p.errorf("invalid UTF-8 in a string")
			}
			p.pos = i + 1
			p.buf = b
			return b, nil
		case c < 0x20:
			p.pos = i
			return nil, p.errorf("control character %s in a string", quoteByte(c))
		case c != '\\':
			b = append(b, c)
			i++
			continue
		}
		if i+1 >= len(d) {
			p.pos = i
			return nil, p.errorf("unexpected end of input in a string")
		}
		switch e := d[i+1]; e {
		case '"', '\\', '/':
			b = append(b, e)
		case 'b':
			b = append(b, '\b')
		case 'f':
			b = append(b, '\f')
		case 'n':
			b = append(b, '\n')
		case 'r':
			b = append(b, '\r')
		case 't':
			b = append(b, '\t')
		case 'u':
			r, ok := hex4(d, i+2)
			if !ok {
				p.pos = i
				return nil, p.errorf("malformed \\u escape")
			}
			i += 6
			if utf16.IsSurrogate(r) {
				r2, ok := rune(0), false
				if i+1 < len(d) && d[i] == '\\' && d[i+1] == 'u' {
					r2, ok = hex4(d, i+2)
				}
				if dec := utf16.DecodeRune(r, r2); ok && dec != utf8.RuneError {
					r = dec
					i += 6
				} else {
					r = utf8.RuneError // a lone surrogate, as encoding/json reads it
				}
			}
			b = utf8.AppendRune(b, r)
			continue
		default:
			p.pos = i
			return nil, p.errorf("malformed escape \\%s", string(rune(e)))
		}
		i += 2
	}
}

func hex4(d []byte, i int) (rune, bool) {
	if i+4 > len(d) {
		return 0, false
	}
	var r rune
	for _, c := range d[i : i+4] {
		switch {
		case c >= '0' && c <= '9':
			r = r<<4 | rune(c-'0')
		case c >= 'a' && c <= 'f':
			r = r<<4 | rune(c-'a'+10)
		case c >= 'A' && c <= 'F':
			r = r<<4 | rune(c-'A'+10)
		default:
			return 0, false
		}
	}
	return r, true
}
