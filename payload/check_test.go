package payload

import (
	"context"
	"errors"
	"testing"
)

func TestOptionsCheck(t *testing.T) {
	if err := (Options{Compressions: ParseCompressions("gzip, br")}).Check(); err != nil {
		t.Fatal(err)
	}
	if c := ParseCompressions("none"); c == nil || len(c) != 0 {
		t.Errorf("none: %q, want an empty list (nil is all)", c)
	}
	for _, o := range []Options{{Input: "xml"}, {Bodies: "headers"}, {Compressions: []string{"lz4"}}} {
		if err := o.Check(); !errors.Is(err, ErrOptions) {
			t.Errorf("%+v: %v, want ErrOptions", o, err)
		}
	}
	if _, err := LoadSchema(context.Background(), "a.proto", "a.pb", nil, ""); !errors.Is(err, ErrOptions) {
		t.Errorf("both schemas: %v", err)
	}
	if _, err := LoadSchema(context.Background(), "", "", nil, "pkg.Msg"); !errors.Is(err, ErrOptions) {
		t.Errorf("a message without a schema: %v", err)
	}
	if s, err := LoadSchema(context.Background(), "", "", nil, ""); s != nil || err != nil {
		t.Errorf("no schema: %v, %v", s, err)
	}
}
