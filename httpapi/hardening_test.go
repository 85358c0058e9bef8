package httpapi_test

import (
	"bytes"
	"testing"

	"github.com/wirebench/wirebench/api"
	"github.com/wirebench/wirebench/codec"
	"github.com/wirebench/wirebench/server"
)

// TestNestedMsgpackBomb is issue 10's crash: an 8 KB gzip body inflating to
// ~8 M nested msgpack arrays overflowed the goroutine stack in the msgpack
// library's recursive skip and killed the server (fatal error, not a
// panic). Now it is a 400 and the server answers the next request.
func TestNestedMsgpackBomb(t *testing.T) {
	srv, c := start(t, server.Options{SeedUsers: 2})
	mp := codec.MustLookup("msgpack")
	for _, unit := range [][]byte{{0x91}, {0x81, 0xa0}} { // arrays, maps
		raw := append([]byte{0x81, 0xa1, 'x'}, bytes.Repeat(unit, (8<<20-10)/len(unit))...)
		raw = append(raw, 0xc0)
		body := gzipBytes(t, raw)
		var e api.Error
		c.do("POST", "/users", &mp, &mp, body, "Content-Encoding", "gzip").decode(t, 400, &mp, &e)
		if e.Code != "malformed" {
			t.Fatalf("error %+v", e)
		}
	}
	var u api.User
	c.do("GET", "/users/1", nil, &mp, nil).decode(t, 200, &mp, &u)
	if n, _ := srv.Store.Len(); n != 2 {
		t.Fatalf("store has %d users", n)
	}
}
