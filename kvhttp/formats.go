package kvhttp

import (
	"errors"
	"fmt"
	"strings"

	"google.golang.org/protobuf/encoding/protowire"

	"github.com/wirebench/wirebench/codec"
	"github.com/wirebench/wirebench/kv"
)

// mediaRaw is the raw-body fast path: the body is the value.
const mediaRaw = "application/octet-stream"

// format encodes the /kv/ objects of the contract in one wire format.
type format interface {
	name() string
	media() string
	decodePut(b []byte) (val []byte, ttl int64, err error)
	encodeGet(key string, val []byte, ttl int64) ([]byte, error)
	decodeKeys(b []byte) ([]string, error)
	encodeValues(vals [][]byte, ok []bool) ([]byte, error)
	decodeItems(b []byte) ([]itemIn, error)
	encodeKeys(keys []string) ([]byte, error)
}

type itemIn struct {
	key string
	val []byte
	ttl int64
}

// Objects for the reflective codecs. Text formats (JSON, TOON) carry the
// value as a string, binary ones (msgpack, CBOR) as bytes.
type (
	// Value is a pointer in the request objects: a missing or null
	// value is a 400, not an empty string stored over the old one.
	putText struct {
		Value *string `json:"value" msgpack:"value" cbor:"value"`
		TTLMs int64   `json:"ttl_ms" msgpack:"ttl_ms" cbor:"ttl_ms"`
	}
	putBin struct {
		Value *[]byte `json:"value" msgpack:"value" cbor:"value"`
		TTLMs int64   `json:"ttl_ms" msgpack:"ttl_ms" cbor:"ttl_ms"`
	}
	getText struct {
		Key   string `json:"key" msgpack:"key" cbor:"key"`
		Value string `json:"value" msgpack:"value" cbor:"value"`
		TTLMs int64  `json:"ttl_ms" msgpack:"ttl_ms" cbor:"ttl_ms"`
	}
	getBin struct {
		Key   string `json:"key" msgpack:"key" cbor:"key"`
		Value []byte `json:"value" msgpack:"value" cbor:"value"`
		TTLMs int64  `json:"ttl_ms" msgpack:"ttl_ms" cbor:"ttl_ms"`
	}
	keysObj struct {
		Keys []string `json:"keys" msgpack:"keys" cbor:"keys"`
	}
	valuesText struct {
		Values []*string `json:"values" msgpack:"values" cbor:"values"`
	}
	valuesBin struct {
		Values [][]byte `json:"values" msgpack:"values" cbor:"values"`
	}
	itemText struct {
		Key   string  `json:"key" msgpack:"key" cbor:"key"`
		Value *string `json:"value" msgpack:"value" cbor:"value"`
		TTLMs int64   `json:"ttl_ms" msgpack:"ttl_ms" cbor:"ttl_ms"`
	}
	itemBin struct {
		Key   string  `json:"key" msgpack:"key" cbor:"key"`
		Value *[]byte `json:"value" msgpack:"value" cbor:"value"`
		TTLMs int64   `json:"ttl_ms" msgpack:"ttl_ms" cbor:"ttl_ms"`
	}
	itemsText struct {
		Items []itemText `json:"items" msgpack:"items" cbor:"items"`
	}
	itemsBin struct {
		Items []itemBin `json:"items" msgpack:"items" cbor:"items"`
	}
)

// reflective is any registered codec that marshals plain structs.
type reflective struct {
	c      codec.Codec
	mt     string
	binary bool
}

func (f reflective) name() string  { return f.c.Name() }
func (f reflective) media() string { return f.mt }

// errNoValue is a PUT (or an mset item) without a value: a 400 that
// changes nothing, in every format.
var errNoValue = errors.New(`no "value" (missing or null; an empty value is "")`)

func (f reflective) decodePut(b []byte) ([]byte, int64, error) {
	if f.binary {
		var p putBin
		if err := f.c.Unmarshal(b, &p); err != nil {
			return nil, 0, err
		}
		if p.Value == nil {
			return nil, 0, errNoValue
		}
		return *p.Value, p.TTLMs, nil
	}
	var p putText
	if err := f.c.Unmarshal(b, &p); err != nil {
		return nil, 0, err
	}
	if p.Value == nil {
		return nil, 0, errNoValue
	}
	return []byte(*p.Value), p.TTLMs, nil
}

func (f reflective) encodeGet(key string, val []byte, ttl int64) ([]byte, error) {
	if f.binary {
		return f.c.Marshal(&getBin{key, val, ttl})
	}
	return f.c.Marshal(&getText{key, string(val), ttl})
}

func (f reflective) decodeKeys(b []byte) ([]string, error) {
	var k keysObj
	err := f.c.Unmarshal(b, &k)
	return k.Keys, err
}

func (f reflective) encodeKeys(keys []string) ([]byte, error) {
	if keys == nil {
		keys = []string{}
	}
	return f.c.Marshal(&keysObj{keys})
}

func (f reflective) encodeValues(vals [][]byte, ok []bool) ([]byte, error) {
	if f.binary {
		out := valuesBin{Values: make([][]byte, len(vals))}
		for i, v := range vals {
			if ok[i] {
				out.Values[i] = append([]byte{}, v...) // non-nil: empty is not null
			}
		}
		return f.c.Marshal(&out)
	}
	out := valuesText{Values: make([]*string, len(vals))}
	for i, v := range vals {
		if ok[i] {
			s := string(v)
			out.Values[i] = &s
		}
	}
	return f.c.Marshal(&out)
}

func (f reflective) decodeItems(b []byte) ([]itemIn, error) {
	var out []itemIn
	if f.binary {
		var in itemsBin
		if err := f.c.Unmarshal(b, &in); err != nil {
			return nil, err
		}
		for i, it := range in.Items {
			if it.Value == nil {
				return nil, fmt.Errorf("item %d: %w", i, errNoValue)
			}
			out = append(out, itemIn{it.Key, *it.Value, it.TTLMs})
		}
		return out, nil
	}
	var in itemsText
	if err := f.c.Unmarshal(b, &in); err != nil {
		return nil, err
	}
	for i, it := range in.Items {
		if it.Value == nil {
			return nil, fmt.Errorf("item %d: %w", i, errNoValue)
		}
		out = append(out, itemIn{it.Key, []byte(*it.Value), it.TTLMs})
	}
	return out, nil
}

// protobuf encodes the objects by hand with protowire (no generated code
// for four small messages). The schema, for clients:
//
//	message Put    { optional bytes value = 2; int64 ttl_ms = 3; }
//	message Item   { string key = 1; optional bytes value = 2; int64 ttl_ms = 3; }  // GET reply, MSET items
//	message Keys   { repeated string keys = 1; }                           // MGET request, keys reply
//	message Values { repeated Value values = 1; }                          // MGET reply
//	message Value  { bytes value = 1; bool present = 2; }
//	message Items  { repeated Item items = 1; }                            // MSET request
//
// value is optional (explicit presence, which proto3 encoders honour by
// sending an empty value): a Put or an MSET Item without it is a 400.
type protobuf struct{}

func (protobuf) name() string  { return "protobuf" }
func (protobuf) media() string { return "application/x-protobuf" }

var errProto = errors.New("kvhttp: malformed protobuf")

// fields walks b's fields, calling fn with the number, type and the
// field's value (bytes for LEN, the varint otherwise).
func fields(b []byte, fn func(num protowire.Number, typ protowire.Type, v []byte, n uint64) error) error {
	for len(b) > 0 {
		num, typ, l := protowire.ConsumeTag(b)
		if l < 0 {
			return errProto
		}
		b = b[l:]
		var v []byte
		var n uint64
		switch typ {
		case protowire.BytesType:
			v, l = protowire.ConsumeBytes(b)
		case protowire.VarintType:
			n, l = protowire.ConsumeVarint(b)
		default:
			l = protowire.ConsumeFieldValue(num, typ, b)
		}
		if l < 0 {
			return errProto
		}
		b = b[l:]
		if err := fn(num, typ, v, n); err != nil {
			return err
		}
	}
	return nil
}

func (protobuf) decodePut(b []byte) (val []byte, ttl int64, err error) {
	has := false
	err = fields(b, func(num protowire.Number, typ protowire.Type, v []byte, n uint64) error {
		switch {
		case num == 2 && typ == protowire.BytesType:
			val, has = v, true
		case num == 3 && typ == protowire.VarintType:
			ttl = int64(n)
		}
		return nil
	})
	if err == nil && !has {
		err = errNoValue
	}
	return val, ttl, err
}

func appendItem(b []byte, key string, val []byte, ttl int64) []byte {
	b = protowire.AppendTag(b, 1, protowire.BytesType)
	b = protowire.AppendString(b, key)
	b = protowire.AppendTag(b, 2, protowire.BytesType)
	b = protowire.AppendBytes(b, val)
	if ttl != 0 {
		b = protowire.AppendTag(b, 3, protowire.VarintType)
		b = protowire.AppendVarint(b, uint64(ttl))
	}
	return b
}

func (protobuf) encodeGet(key string, val []byte, ttl int64) ([]byte, error) {
	return appendItem(nil, key, val, ttl), nil
}

func (protobuf) decodeKeys(b []byte) ([]string, error) {
	var keys []string
	err := fields(b, func(num protowire.Number, typ protowire.Type, v []byte, _ uint64) error {
		if num == 1 && typ == protowire.BytesType {
			keys = append(keys, string(v))
		}
		return nil
	})
	return keys, err
}

func (protobuf) encodeKeys(keys []string) ([]byte, error) {
	var b []byte
	for _, k := range keys {
		b = protowire.AppendTag(b, 1, protowire.BytesType)
		b = protowire.AppendString(b, k)
	}
	return b, nil
}

func (protobuf) encodeValues(vals [][]byte, ok []bool) ([]byte, error) {
	var b, m []byte
	for i, v := range vals {
		m = m[:0]
		if ok[i] {
			m = protowire.AppendTag(m, 1, protowire.BytesType)
			m = protowire.AppendBytes(m, v)
			m = protowire.AppendTag(m, 2, protowire.VarintType)
			m = protowire.AppendVarint(m, 1)
		}
		b = protowire.AppendTag(b, 1, protowire.BytesType)
		b = protowire.AppendBytes(b, m)
	}
	return b, nil
}

func (protobuf) decodeItems(b []byte) ([]itemIn, error) {
	var out []itemIn
	err := fields(b, func(num protowire.Number, typ protowire.Type, v []byte, _ uint64) error {
		if num != 1 || typ != protowire.BytesType {
			return nil
		}
		var it itemIn
		has := false
		err := fields(v, func(num protowire.Number, typ protowire.Type, v []byte, n uint64) error {
			switch {
			case num == 1 && typ == protowire.BytesType:
				it.key = string(v)
			case num == 2 && typ == protowire.BytesType:
				it.val, has = v, true
			case num == 3 && typ == protowire.VarintType:
				it.ttl = int64(n)
			}
			return nil
		})
		if err == nil && !has {
			err = fmt.Errorf("item %d: %w", len(out), errNoValue)
		}
		out = append(out, it)
		return err
	})
	return out, err
}

// formatFor finds the format of a media type ("" and "*/*": JSON).
func formatFor(mt string) (format, bool) {
	mt = codec.BaseMediaType(mt)
	switch mt {
	case "", "*/*", "application/*":
		mt = codec.MediaJSON
	case "application/x-protobuf", "application/protobuf":
		return protobuf{}, true
	}
	e, ok := codec.ForMediaType(mt)
	if !ok {
		return nil, false
	}
	switch e.Codec.Name() {
	case "msgpack", "cbor":
		return reflective{e.Codec, e.MediaTypes[0], true}, true
	}
	return reflective{e.Codec, e.MediaTypes[0], false}, true
}

// accepted picks the reply format from Accept: the first listed type we
// have (q-values are not weighed), the request's format for */*, or
// false. raw is true when application/octet-stream comes first.
func accepted(accept string, def format) (f format, raw bool, ok bool) {
	if strings.TrimSpace(accept) == "" {
		return def, false, true
	}
	for rest, more := accept, true; more; {
		var part string
		part, rest, more = strings.Cut(rest, ",") // strings.Split's parts, without the slice
		mt := codec.BaseMediaType(part)
		switch mt {
		case mediaRaw:
			return def, true, true
		case "*/*", "application/*":
			return def, false, true
		}
		if f, ok := formatFor(mt); ok {
			return f, false, true
		}
	}
	return nil, false, false
}

func checkTTL(ttl int64) error {
	if ttl < 0 || ttl > MaxTTL {
		return fmt.Errorf("ttl_ms must be 0..%d, got %d", int64(MaxTTL), ttl)
	}
	return nil
}

// MaxTTL bounds ttl_ms (2^53 ms, 285,000 years): past it, now + ttl
// would overflow into the past and delete what was written.
const MaxTTL = 1 << 53

// jsonFormat is the default format ("" and */*), found once: codecs
// register in their package's init.
var jsonFormat, _ = formatFor("")

// expAt converts a relative ttl_ms to the store's absolute time.
func expAt(st *kv.Store, ttl int64) int64 {
	if ttl == 0 {
		return 0
	}
	return st.Now() + ttl
}
