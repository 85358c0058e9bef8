package codec_test

import (
	"bytes"
	"errors"
	"reflect"
	"testing"

	"github.com/wirebench/wirebench/api"
	"github.com/wirebench/wirebench/codec"
	"github.com/wirebench/wirebench/toon"
)

func TestTOONRoundTripsUserList(t *testing.T) {
	e, ok := codec.ForMediaType("application/toon; charset=utf-8")
	if !ok || e.Codec.Name() != "toon" {
		t.Fatalf("application/toon resolves to %+v, %v", e, ok)
	}
	if e.MediaTypes[0] != codec.MediaTOON {
		t.Errorf("canonical media type %q, want %q", e.MediaTypes[0], codec.MediaTOON)
	}
	in := &api.UserList{Users: []api.User{
		{ID: 1, Name: "Ada, Countess: of Lovelace", Email: "ada@example.com", CreatedAt: ts},
		{ID: 2, Name: "-leading hyphen", Email: "b@example.com", CreatedAt: ts.Add(1)},
	}}
	data, err := e.Codec.Marshal(in)
	if err != nil {
		t.Fatal(err)
	}
	want := "users[2]{id,name,email,created_at}:\n" +
		`  1,"Ada, Countess: of Lovelace",ada@example.com,"2026-11-22T10:11:12.123456789Z"` + "\n" +
		`  2,"-leading hyphen",b@example.com,"2026-11-22T10:11:12.12345679Z"`
	if string(data) != want {
		t.Fatalf("Marshal:\n%s\nwant:\n%s", data, want)
	}
	var out api.UserList
	if err := e.Codec.Unmarshal(data, &out); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(&out, in) {
		t.Fatalf("round trip: got %+v, want %+v", out, in)
	}
	// A body cut at a line break is an error, not a shorter list.
	if err := e.Codec.Unmarshal(data[:bytes.LastIndexByte(data, '\n')], &out); !errors.Is(err, toon.ErrCount) {
		t.Fatalf("truncated: err = %v, want toon.ErrCount", err)
	}
}
