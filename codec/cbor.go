package codec

import (
	"fmt"

	"github.com/fxamacker/cbor/v2"
)

// cborCodec is github.com/fxamacker/cbor/v2: maintained, fuzzed, RFC 8949
// conformant, with explicit decoding limits. Its default time encoding is
// integer seconds, which would drop nanoseconds (the TOON seed's flaw), so
// times are RFC 3339 strings with nanoseconds under tag 0. Struct field names
// come from the json tags, as fxamacker/cbor falls back to them.
type cborCodec struct {
	enc cbor.EncMode
	dec cbor.DecMode
}

func newCBOR() cborCodec {
	enc, err := cbor.EncOptions{Time: cbor.TimeRFC3339Nano, TimeTag: cbor.EncTagRequired}.EncMode()
	if err != nil {
		panic(fmt.Sprintf("codec cbor: %v", err))
	}
	dec, err := cbor.DecOptions{
		MaxNestedLevels:  DefaultLimits.MaxDepth,
		MaxArrayElements: DefaultLimits.MaxItems,
		MaxMapPairs:      DefaultLimits.MaxItems,
	}.DecMode()
	if err != nil {
		panic(fmt.Sprintf("codec cbor: %v", err))
	}
	return cborCodec{enc: enc, dec: dec}
}

func (cborCodec) Name() string                    { return "cbor" }
func (c cborCodec) Marshal(v any) ([]byte, error) { return c.enc.Marshal(v) }
func (c cborCodec) Unmarshal(data []byte, v any) (err error) {
	defer recoverDecode("cbor", &err)
	return c.dec.Unmarshal(data, v)
}

func init() { Register(newCBOR(), "application/cbor") }
