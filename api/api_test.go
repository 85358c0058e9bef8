package api

import (
	"errors"
	"fmt"
	"strings"
	"testing"
)

func TestUserValidate(t *testing.T) {
	for _, tc := range []struct {
		u  User
		ok bool
	}{
		{User{Name: "Ada", Email: "ada@example.com"}, true},
		{User{Name: "Ada", Email: "a.b+c@sub.example.co"}, true},
		{User{Name: "", Email: "ada@example.com"}, false},
		{User{Name: "  ", Email: "ada@example.com"}, false},
		{User{Name: strings.Repeat("x", MaxNameLen+1), Email: "ada@example.com"}, false},
		{User{Name: strings.Repeat("x", MaxNameLen), Email: "ada@example.com"}, true},
		{User{Name: "Ada", Email: ""}, false},
		{User{Name: "Ada", Email: "ada"}, false},
		{User{Name: "Ada", Email: "@example.com"}, false},
		{User{Name: "Ada", Email: "ada@example"}, false},
		{User{Name: "Ada", Email: "ada@example."}, false},
		{User{Name: "Ada", Email: "a@b@example.com"}, false},
		{User{Name: "Ada", Email: "a da@example.com"}, false},
		{User{Name: "\xff", Email: "ada@example.com"}, false},
	} {
		err := tc.u.Validate()
		if (err == nil) != tc.ok {
			t.Errorf("Validate(%q, %q) = %v, want ok=%v", tc.u.Name, tc.u.Email, err, tc.ok)
		}
		if err != nil && !errors.Is(err, ErrInvalid) {
			t.Errorf("Validate error %v does not wrap ErrInvalid", err)
		}
	}
}

func TestTodoAndEchoValidate(t *testing.T) {
	if err := (&Todo{Text: "x"}).Validate(); err != nil {
		t.Error(err)
	}
	if err := (&Todo{Text: strings.Repeat("x", MaxTextLen+1)}).Validate(); !errors.Is(err, ErrInvalid) {
		t.Errorf("long todo: %v", err)
	}
	if err := (&EchoRequest{}).Validate(); err != nil {
		t.Errorf("empty echo must be allowed: %v", err)
	}
	if err := (&EchoRequest{SecondMessage: strings.Repeat("x", MaxEchoLen+1)}).Validate(); !errors.Is(err, ErrInvalid) {
		t.Errorf("long echo: %v", err)
	}
	if got := Echo(EchoRequest{FirstMessage: "a", SecondMessage: "b"}); got.Message != "ab" {
		t.Errorf("Echo = %q", got.Message)
	}
}

func TestCode(t *testing.T) {
	for err, want := range map[error]string{
		fmt.Errorf("user 1: %w", ErrNotFound): "not_found",
		ErrInvalid:                            "invalid_argument",
		ErrMalformed:                          "malformed",
		ErrTooLarge:                           "too_large",
		ErrUnsupportedType:                    "unsupported_media_type",
		ErrNotAcceptable:                      "not_acceptable",
		ErrMethod:                             "method_not_allowed",
		ErrTimeout:                            "timeout",
		ErrUnavailable:                        "unavailable",
		errors.New("boom"):                    "internal",
	} {
		if got := Code(err); got != want {
			t.Errorf("Code(%v) = %q, want %q", err, got, want)
		}
	}
}
