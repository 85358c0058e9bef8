package payload

import (
	"encoding/json"

	"github.com/fxamacker/cbor/v2"
	gojson "github.com/goccy/go-json"
	"github.com/vmihailenco/msgpack/v5"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/types/dynamicpb"

	"github.com/wirebench/wirebench/toon"
)

// ownCodec is a format library's own API, called directly as its own
// benchmarks call it (a tight loop of Marshal, or of Unmarshal into a
// fresh value of the same Go type), on the very values wirebench's codec
// is given: the lab times both, in alternating batches, and reports the
// ratio, so a user sees what wirebench adds around the library.
type ownCodec struct {
	// calls are the calls timed, for the report.
	calls   string
	marshal func(any) ([]byte, error)
	decode  func([]byte) (any, error)
	// adds says what wirebench's codec does beyond these calls; "" when
	// it makes the same calls.
	adds string
}

// scanAdds is what the codecs guarded by a scanner of ours add on decode.
const scanAdds = "decode: wirebench's limit scan of the bytes first (depth ≤ 64, ≤ 2^20 items, one value: " +
	"the server's guard against hostile bodies, package codec), and a recover around the library"

func ownAny(calls string, marshal func(any) ([]byte, error), unmarshal func([]byte, any) error, adds string) *ownCodec {
	return &ownCodec{calls: calls, marshal: marshal, adds: adds,
		decode: func(data []byte) (any, error) {
			var v any
			err := unmarshal(data, &v)
			return v, err
		}}
}

// ownCodecFor is the library' own calls, by wirebench format name.
func ownCodecFor(name string) *ownCodec {
	switch name {
	case "json":
		return ownAny("json.Marshal(v); json.Unmarshal(b, &v), v any", json.Marshal, json.Unmarshal, scanAdds)
	case "json-fast":
		return ownAny("gojson.Marshal(v); gojson.Unmarshal(b, &v), v any", gojson.Marshal, gojson.Unmarshal, scanAdds)
	case "toon":
		return ownAny("toon.Marshal(v); toon.Unmarshal(b, &v), v any", toon.Marshal, toon.Unmarshal,
			"decode: the same call with MaxDepth 64 (toon.UnmarshalOptions)")
	case "cbor":
		return ownAny("cbor.Marshal(v); cbor.Unmarshal(b, &v), v any (the default modes)", cbor.Marshal, cbor.Unmarshal,
			"its own EncMode (RFC 3339 times, none here) and DecMode (depth 64, ≤ 2^20 items) instead of the defaults, and a recover around the library")
	case "msgpack":
		return ownAny("msgpack.Marshal(v); msgpack.Unmarshal(b, &v), v any", msgpack.Marshal, msgpack.Unmarshal, scanAdds)
	}
	return nil
}

// ownProto is protobuf's own calls on a dynamicpb message of the schema:
// the only typed value a program has of a schema read at run time.
// protobuf's own benchmarks use generated code, which is faster than
// dynamicpb; that difference is the message type's, not wirebench's.
func ownProto(md protoreflect.MessageDescriptor) *ownCodec {
	return &ownCodec{
		calls:   "proto.Marshal(m); proto.Unmarshal(b, m), m a new dynamicpb message of " + string(md.FullName()),
		marshal: func(v any) ([]byte, error) { return proto.Marshal(v.(proto.Message)) },
		decode: func(data []byte) (any, error) {
			m := dynamicpb.NewMessage(md)
			err := proto.Unmarshal(data, m)
			return m, err
		},
		adds: "decode: wirebench's scan of the bytes for unknown groups first (depth ≤ 64), a recursion limit of 64, " +
			"and a recover around the library",
	}
}
