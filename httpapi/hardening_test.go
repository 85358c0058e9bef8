package httpapi_test

import (
	"bytes"
	"testing"

	"github.com/wirebench/wirebench/api"
	"github.com/wirebench/wirebench/codec"
	"github.com/wirebench/wirebench/httpapi"
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

// TestInconsistenciesItem7: each format and coding answers the same way
// (issue 10 item 7). JSON with ill-formed UTF-8 was stored with U+FFFD,
// msgpack with trailing bytes was accepted, a zstd frame declaring 2^63
// bytes was a 400 and charset=utf-16 was ignored.
func TestInconsistenciesItem7(t *testing.T) {
	srv, c := start(t, server.Options{SeedUsers: 2})
	fastSrv, fast := start(t, server.Options{SeedUsers: 2, HTTP: httpapi.Options{JSONLib: "fast"}})
	js, mp := codec.MustLookup("json"), codec.MustLookup("msgpack")
	user, err := mp.Codec.Marshal(&api.User{Name: "Ada", Email: "ada@example.com"})
	if err != nil {
		t.Fatal(err)
	}
	zstdHuge := []byte{0x28, 0xb5, 0x2f, 0xfd, 0xe0, 0, 0, 0, 0, 0, 0, 0, 0x80, 0x09, 0, 0, '{'} // single segment, 2^63 bytes
	zstdWindow := []byte{0x28, 0xb5, 0x2f, 0xfd, 0x00, 0xf8, 0x09, 0, 0, '{'}                    // window 2^41
	cases := []struct {
		name   string
		in     *codec.Entry
		body   []byte
		hdr    []string
		status int
		code   string
	}{
		{"json invalid UTF-8", &js, []byte("{\"name\":\"Ad\xffa\",\"email\":\"ada@example.com\"}"), nil, 400, "malformed"},
		{"json lone surrogate", &js, []byte(`{"name":"Ad\udc00a","email":"ada@example.com"}`), nil, 400, "malformed"},
		{"json truncated UTF-8", &js, []byte("{\"name\":\"Ad\xc3\",\"email\":\"ada@example.com\"}"), nil, 400, "malformed"},
		{"msgpack trailing byte", &mp, append(user, 0xc0), nil, 400, "malformed"},
		{"msgpack two values", &mp, append(user, user...), nil, 400, "malformed"},
		{"zstd declaring 2^63 bytes", &js, zstdHuge, []string{"Content-Encoding", "zstd"}, 413, "too_large"},
		{"zstd declaring a 2 TiB window", &js, zstdWindow, []string{"Content-Encoding", "zstd"}, 413, "too_large"},
		{"charset utf-16", nil, []byte(`{"name":"Ada","email":"ada@example.com"}`), []string{"Content-Type", "application/json; charset=utf-16"}, 415, "unsupported_media_type"},
		{"charset latin1 msgpack", nil, user, []string{"Content-Type", "application/msgpack; charset=iso-8859-1"}, 415, "unsupported_media_type"},
		{"bad parameters", nil, user, []string{"Content-Type", "application/msgpack; charset"}, 415, "unsupported_media_type"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			for _, c := range []*client{c, fast} {
				var e api.Error
				r := c.do("POST", "/users", tc.in, &js, tc.body, tc.hdr...)
				r.decode(t, tc.status, &js, &e)
				if e.Code != tc.code {
					t.Fatalf("error %+v, want code %s", e, tc.code)
				}
			}
		})
	}
	// UTF-8 in either spelling of the charset is fine.
	for _, ct := range []string{"application/json; charset=utf-8", "application/json;charset=UTF-8"} {
		var u api.User
		c.do("POST", "/users", nil, &js, []byte(`{"name":"Ada","email":"ada@example.com"}`), "Content-Type", ct).decode(t, 201, &js, &u)
		srv.Store.DeleteUser(u.ID)
	}
	for _, s := range []*server.Server{srv, fastSrv} {
		if n, _ := s.Store.Len(); n != 2 {
			t.Fatalf("store has %d users", n)
		}
	}
}
