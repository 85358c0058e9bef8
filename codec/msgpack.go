package codec

import (
	"bytes"
	"sync"

	"github.com/vmihailenco/msgpack/v5"
)

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
	d := mpDecoders.Get().(*mpDecoder)
	defer func() {
		// A panic in the library leaves the decoder as it was: not pooled.
		if r := recover(); r != nil {
			err = decodePanic("msgpack", r)
			return
		}
		d.r.Reset(nil)
		d.dec.ResetReader(nil)
		mpDecoders.Put(d)
	}()
	d.r.Reset(data)
	// What msgpack.Unmarshal does, less its allocation of a bytes.Reader:
	// Reset clears every option, so the value preallocation that Unmarshal
	// asks for before its Reset is off there too.
	d.dec.Reset(&d.r)
	return d.dec.Decode(v)
}

// mpDecoder is a library decoder with the reader it reads from, reused.
type mpDecoder struct {
	r   bytes.Reader
	dec *msgpack.Decoder
}

var mpDecoders = sync.Pool{New: func() any { return &mpDecoder{dec: msgpack.NewDecoder(nil)} }}

func init() { Register(msgpackCodec{}, "application/msgpack", "application/x-msgpack") }
