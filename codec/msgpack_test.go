package codec

import (
	"reflect"
	"testing"

	"github.com/vmihailenco/msgpack/v5"
)

// The codec decodes as msgpack.Unmarshal does, into the same values, with
// one allocation fewer (the bytes.Reader Unmarshal makes each call), and
// a decoder reused after an error or a short body decodes the next body
// from scratch.
func TestMsgpackDecodesAsUnmarshal(t *testing.T) {
	_, bodies := benchBodies(t)
	c := msgpackCodec{}
	bad := []byte{0x82, 0xa1, 'a', 0x01} // a map of 2 with one pair: short
	for i, b := range bodies {
		var want, got any
		if err := msgpack.Unmarshal(b, &want); err != nil {
			t.Fatal(err)
		}
		if err := c.Unmarshal(bad, &got); err == nil {
			t.Fatalf("a short map decoded")
		}
		got = nil
		if err := c.Unmarshal(b, &got); err != nil || !reflect.DeepEqual(got, want) {
			t.Fatalf("body %d: %v (%v), want %v", i, got, err, want)
		}
	}
	b := bodies[0]
	lib := testing.AllocsPerRun(100, func() {
		var v any
		msgpack.Unmarshal(b, &v)
	})
	ours := testing.AllocsPerRun(100, func() {
		var v any
		c.Unmarshal(b, &v)
	})
	if ours > lib-1 {
		t.Errorf("%.0f allocations a decode, msgpack.Unmarshal %.0f: want one fewer", ours, lib)
	}
}
