package codec

import "github.com/vmihailenco/msgpack/v5"

// msgpackCodec is github.com/vmihailenco/msgpack/v5: the most used Go
// MessagePack library, maintained, reflection-cached, and it encodes
// time.Time as the standard timestamp extension (-1) with nanoseconds.
// Structs are encoded as maps keyed by field name, as the other
// self-describing formats are, so that byte counts compare like with like.
type msgpackCodec struct{}

func (msgpackCodec) Name() string                  { return "msgpack" }
func (msgpackCodec) Marshal(v any) ([]byte, error) { return msgpack.Marshal(v) }

// Unmarshal scans data first (limits.go): the library has no depth limit,
// skips unknown fields recursively and accepts trailing bytes.
func (msgpackCodec) Unmarshal(data []byte, v any) (err error) {
	if err := scanMsgpack(data, DefaultLimits); err != nil {
		return err
	}
	defer recoverDecode("msgpack", &err)
	return msgpack.Unmarshal(data, v)
}

func init() { Register(msgpackCodec{}, "application/msgpack", "application/x-msgpack") }
