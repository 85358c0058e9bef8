package export

import (
	"math"

	"google.golang.org/protobuf/encoding/protowire"
)

// The remote write and OTLP requests are written field by field with
// protowire rather than built from prompb and the OTLP module's
// generated types: those packages (with gogo/protobuf and Prometheus's
// model packages behind prompb) registered their descriptors at init,
// ~44 kB of live heap in every process of the one binary, the server's
// included, which its GC marks on every cycle. Only the few messages
// sent are written here; the tests decode them with the generated types.

// appendMessage appends field num holding the message enc appends.
func appendMessage(b []byte, num protowire.Number, enc func([]byte) []byte) []byte {
	b = protowire.AppendTag(b, num, protowire.BytesType)
	at := len(b)
	b = enc(b)
	// The length goes before the body: move the body up by its size.
	n := len(b) - at
	size := protowire.SizeVarint(uint64(n))
	b = append(b, make([]byte, size)...)
	copy(b[at+size:], b[at:at+n])
	protowire.AppendVarint(b[at:at], uint64(n))
	return b
}

// appendString appends a string field, left out when empty (proto3).
func appendString(b []byte, num protowire.Number, s string) []byte {
	if s == "" {
		return b
	}
	b = protowire.AppendTag(b, num, protowire.BytesType)
	return protowire.AppendString(b, s)
}

// appendBytesField appends a bytes field, left out when empty (proto3).
func appendBytesField(b []byte, num protowire.Number, v []byte) []byte {
	if len(v) == 0 {
		return b
	}
	b = protowire.AppendTag(b, num, protowire.BytesType)
	return protowire.AppendBytes(b, v)
}

// appendDouble appends a double field, left out when zero (proto3);
// always when the field has presence (optional, a oneof member).
func appendDouble(b []byte, num protowire.Number, v float64, always bool) []byte {
	if v == 0 && !always {
		return b
	}
	b = protowire.AppendTag(b, num, protowire.Fixed64Type)
	return protowire.AppendFixed64(b, math.Float64bits(v))
}

// appendVarint appends a varint field (int64, uint64, uint32, bool,
// enum), left out when zero unless always.
func appendVarint(b []byte, num protowire.Number, v uint64, always bool) []byte {
	if v == 0 && !always {
		return b
	}
	b = protowire.AppendTag(b, num, protowire.VarintType)
	return protowire.AppendVarint(b, v)
}

// appendSint appends a sint32 or sint64 field (zigzag), left out when zero.
func appendSint(b []byte, num protowire.Number, v int64) []byte {
	return appendVarint(b, num, protowire.EncodeZigZag(v), false)
}

// appendFixed64 appends a fixed64 field, left out when zero.
func appendFixed64(b []byte, num protowire.Number, v uint64) []byte {
	if v == 0 {
		return b
	}
	b = protowire.AppendTag(b, num, protowire.Fixed64Type)
	return protowire.AppendFixed64(b, v)
}

// appendPacked appends a packed repeated varint field of len(vs)
// values, each encoded by enc; left out when empty.
func appendPacked[T any](b []byte, num protowire.Number, vs []T, enc func(T) uint64) []byte {
	if len(vs) == 0 {
		return b
	}
	n := 0
	for _, v := range vs {
		n += protowire.SizeVarint(enc(v))
	}
	b = protowire.AppendTag(b, num, protowire.BytesType)
	b = protowire.AppendVarint(b, uint64(n))
	for _, v := range vs {
		b = protowire.AppendVarint(b, enc(v))
	}
	return b
}
