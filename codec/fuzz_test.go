package codec_test

import (
	"testing"

	"github.com/wirebench/wirebench/api"
	"github.com/wirebench/wirebench/codec"
)

// FuzzDecodeRequest feeds arbitrary bytes to the request-decoding path of
// every codec, for each request body type the server accepts. Decoding must
// never panic, and whatever decodes must re-encode and decode to the same
// value. The first byte picks the codec so the corpus covers all of them.
func FuzzDecodeRequest(f *testing.F) {
	names := codec.Names()
	for i, name := range names {
		c := codec.MustLookup(name).Codec
		for _, v := range values() {
			if data, err := c.Marshal(v); err == nil {
				f.Add(byte(i), data)
			}
		}
	}
	f.Add(byte(0), []byte{0xff, 0x00, 0x7f})
	f.Fuzz(func(t *testing.T, pick byte, data []byte) {
		c := codec.MustLookup(names[int(pick)%len(names)]).Codec
		for _, v := range []any{new(api.User), new(api.Todo), new(api.EchoRequest), new(api.UserList)} {
			if err := c.Unmarshal(data, v); err != nil {
				continue
			}
			again, err := c.Marshal(v)
			if err != nil {
				t.Fatalf("%s: decoded %T %+v but cannot re-encode: %v", c.Name(), v, v, err)
			}
			back := newLike(v)
			if err := c.Unmarshal(again, back); err != nil {
				t.Fatalf("%s: re-encoded %q does not decode: %v", c.Name(), again, err)
			}
			if !equal(back, v) {
				t.Fatalf("%s: decode∘encode not identity:\n got %+v\nwant %+v", c.Name(), back, v)
			}
		}
	})
}

func newLike(v any) any {
	switch v.(type) {
	case *api.User:
		return new(api.User)
	case *api.Todo:
		return new(api.Todo)
	case *api.EchoRequest:
		return new(api.EchoRequest)
	default:
		return new(api.UserList)
	}
}
