package codec_test

import (
	"bytes"
	"reflect"
	"testing"
	"time"

	"github.com/wirebench/wirebench/api"
	"github.com/wirebench/wirebench/codec"
)

var ts = time.Date(2026, 11, 22, 10, 11, 12, 123456789, time.UTC)

// values are what the REST API sends and receives; each must survive every
// codec unchanged, timestamps to the nanosecond.
func values() []any {
	return []any{
		&api.User{ID: 42, Name: "Ada Lovelace", Email: "ada@example.com", CreatedAt: ts},
		&api.User{ID: 1, Name: "zero time", Email: "z@example.com"},
		&api.UserList{Users: []api.User{
			{ID: 1, Name: "a, b: c", Email: "a@b.co", CreatedAt: ts},
			{ID: 2, Name: " spaced ", Email: "x@y.org", CreatedAt: ts.Add(1)},
		}},
		&api.UserList{Users: []api.User{}},
		&api.Todo{ID: "0b9c8a6e-7a40-4e9c-9f0e-3b2d8a1c5e77", Text: "Buy milk", Done: true},
		&api.TodoList{Todos: []api.Todo{{ID: "1", Text: "héllo ✓", Done: false}}},
		&api.EchoRequest{FirstMessage: "Hello, ", SecondMessage: "World!"},
		&api.EchoResponse{Message: "Hello, World!"},
		&api.Error{Error: "user 7: not found", Code: "not_found"},
	}
}

func TestRoundTripEveryCodec(t *testing.T) {
	names := codec.Names()
	for _, want := range []string{"cbor", "json", "json-fast", "msgpack", "protobuf"} {
		if _, ok := codec.Lookup(want); !ok {
			t.Errorf("codec %q not registered (have %v)", want, names)
		}
	}
	for _, name := range names {
		c := codec.MustLookup(name).Codec
		for _, v := range values() {
			t.Run(name+"/"+reflect.TypeOf(v).Elem().Name(), func(t *testing.T) {
				data, err := c.Marshal(v)
				if err != nil {
					t.Fatalf("Marshal: %v", err)
				}
				got := reflect.New(reflect.TypeOf(v).Elem()).Interface()
				if err := c.Unmarshal(data, got); err != nil {
					t.Fatalf("Unmarshal(%q): %v", data, err)
				}
				if !equal(got, v) {
					t.Errorf("round trip changed the value:\n got %+v\nwant %+v\nwire %q", got, v, data)
				}
			})
		}
	}
}

// equal compares api values, timestamps with time.Equal (location-free)
// and nil and empty slices alike.
func equal(a, b any) bool {
	switch a := a.(type) {
	case *api.User:
		b := b.(*api.User)
		return a.ID == b.ID && a.Name == b.Name && a.Email == b.Email && a.CreatedAt.Equal(b.CreatedAt)
	case *api.UserList:
		b := b.(*api.UserList)
		if len(a.Users) != len(b.Users) {
			return false
		}
		for i := range a.Users {
			if !equal(&a.Users[i], &b.Users[i]) {
				return false
			}
		}
		return true
	case *api.TodoList:
		b := b.(*api.TodoList)
		return len(a.Todos) == len(b.Todos) && (len(a.Todos) == 0 || reflect.DeepEqual(a.Todos, b.Todos))
	default:
		return reflect.DeepEqual(a, b)
	}
}

func TestMediaTypes(t *testing.T) {
	for mt, want := range map[string]string{
		"application/json":                "json",
		"application/json; charset=utf-8": "json",
		"Application/JSON":                "json",
		"application/x-protobuf":          "protobuf",
		"application/protobuf":            "protobuf",
		"application/msgpack":             "msgpack",
		"application/x-msgpack":           "msgpack",
		"application/cbor":                "cbor",
	} {
		e, ok := codec.ForMediaType(mt)
		if !ok || e.Codec.Name() != want {
			t.Errorf("ForMediaType(%q) = %v, %v; want %s", mt, e.Codec, ok, want)
		}
	}
	if _, ok := codec.ForMediaType("application/x-www-form-urlencoded"); ok {
		t.Error("form encoding must not resolve to a codec")
	}
}

func TestProtobufRejectsForeignTypes(t *testing.T) {
	c := codec.MustLookup("protobuf").Codec
	if _, err := c.Marshal(struct{ X int }{1}); err == nil {
		t.Error("Marshal of a foreign type succeeded")
	}
	if err := c.Unmarshal(nil, new(int)); err == nil {
		t.Error("Unmarshal into a foreign type succeeded")
	}
}

// TestMarshalToIsMarshal: every codec's MarshalTo (its own, or the
// fallback through Marshal) appends exactly Marshal's bytes after what dst
// holds, HTML escaping included, and leaves dst as it was on failure.
func TestMarshalToIsMarshal(t *testing.T) {
	html := &api.User{ID: 7, Name: "<b>&amp;</b> \u2028", Email: "a@b.c", CreatedAt: ts}
	own := 0
	for _, name := range codec.Names() {
		c := codec.MustLookup(name).Codec
		if _, ok := c.(codec.BufferMarshaler); ok {
			own++
		}
		for _, v := range append(values(), html) {
			want, err := c.Marshal(v)
			if err != nil {
				t.Fatalf("%s: Marshal(%T): %v", name, v, err)
			}
			var dst bytes.Buffer
			dst.WriteString("prefix")
			if err := codec.MarshalTo(c, &dst, v); err != nil {
				t.Fatalf("%s: MarshalTo(%T): %v", name, v, err)
			}
			if got := dst.Bytes(); !bytes.Equal(got[:6], []byte("prefix")) || !bytes.Equal(got[6:], want) {
				t.Errorf("%s: MarshalTo(%T) = %q, want prefix%q", name, v, got, want)
			}
		}
		var dst bytes.Buffer
		dst.WriteString("kept")
		if err := codec.MarshalTo(c, &dst, func() {}); err == nil {
			t.Errorf("%s: MarshalTo(a func) succeeded: %q", name, dst.Bytes())
		} else if dst.String() != "kept" {
			t.Errorf("%s: MarshalTo failed (%v) but changed dst to %q", name, err, dst.Bytes())
		}
	}
	if own < 2 {
		t.Errorf("%d codecs encode into a buffer themselves, want both JSON libraries", own)
	}
}
