package api

import (
	"errors"
	"strings"
	"testing"
)

// The field limits are part of the API contract, so they are pinned here
// with literal sizes: a change to a constant must fail this test, not
// silently move the contract. Each limit is accepted exactly and refused
// one byte over.
func TestFieldLimitsAreTheContract(t *testing.T) {
	email := func(n int) string { // a valid address of exactly n bytes
		const domain = "@example.com"
		return strings.Repeat("a", n-len(domain)) + domain
	}
	for _, tc := range []struct {
		name string
		err  error
	}{
		{"name 200 bytes", (&User{Name: strings.Repeat("n", 200), Email: "a@b.co"}).Validate()},
		{"email 254 bytes (RFC 5321)", (&User{Name: "Ada", Email: email(254)}).Validate()},
		{"todo 2000 bytes", (&Todo{Text: strings.Repeat("t", 2000)}).Validate()},
		{"echo 65536 bytes each", (&EchoRequest{FirstMessage: strings.Repeat("e", 65536), SecondMessage: strings.Repeat("e", 65536)}).Validate()},
	} {
		if tc.err != nil {
			t.Errorf("%s: refused: %v", tc.name, tc.err)
		}
	}
	for _, tc := range []struct {
		name string
		err  error
	}{
		{"name 201 bytes", (&User{Name: strings.Repeat("n", 201), Email: "a@b.co"}).Validate()},
		{"email 255 bytes", (&User{Name: "Ada", Email: email(255)}).Validate()},
		{"todo 2001 bytes", (&Todo{Text: strings.Repeat("t", 2001)}).Validate()},
		{"first message 65537 bytes", (&EchoRequest{FirstMessage: strings.Repeat("e", 65537)}).Validate()},
		{"second message 65537 bytes", (&EchoRequest{SecondMessage: strings.Repeat("e", 65537)}).Validate()},
	} {
		if !errors.Is(tc.err, ErrInvalid) {
			t.Errorf("%s: got %v, want ErrInvalid", tc.name, tc.err)
		}
	}
	// The message names the field, its size and the limit.
	err := (&User{Name: "Ada", Email: email(255)}).Validate()
	if err == nil || err.Error() != "invalid argument: email is 255 bytes, limit 254" {
		t.Errorf("email error = %v", err)
	}
}

// TestEmailShape covers the domain rules byte by byte: the domain is what
// follows the @, and it needs a dot that is neither its first nor its last
// byte.
func TestEmailShape(t *testing.T) {
	for email, ok := range map[string]bool{
		"a@b.c":       true,
		"a@.com":      false, // domain starts with its dot
		"ab@.com":     false,
		"a@b.":        false,
		"a@b":         false,
		"a@bc.d.":     false,
		"a.b@c":       false, // the dot is in the local part, not the domain
		"a@b.c.d":     true,
		"a@b..c":      true, // deliverability is not our business
		"a@b.c\tx":    false,
		"<a@b.c>":     false,
		"a\"x@b.c":    false,
		"é@b.c":       true,
		"a@b.c;d@e.f": false,
	} {
		err := (&User{Name: "Ada", Email: email}).Validate()
		if (err == nil) != ok {
			t.Errorf("email %q: %v, want ok=%v", email, err, ok)
		}
	}
}

// TestRequiredAndOptional: names, emails and todo texts are required (not
// blank), echo messages are not; a required field of only whitespace is
// blank, and invalid UTF-8 is refused within the limit.
func TestRequiredAndOptional(t *testing.T) {
	if err := (&Todo{Text: " \t\n"}).Validate(); !errors.Is(err, ErrInvalid) {
		t.Errorf("blank todo: %v", err)
	}
	if err := (&EchoRequest{FirstMessage: " ", SecondMessage: ""}).Validate(); err != nil {
		t.Errorf("blank echo: %v", err)
	}
	if err := (&EchoRequest{SecondMessage: "\xff"}).Validate(); !errors.Is(err, ErrInvalid) {
		t.Errorf("invalid UTF-8 echo: %v", err)
	}
	if err := (&Todo{Text: "x\xc3"}).Validate(); err == nil || !strings.Contains(err.Error(), "text is not valid UTF-8") {
		t.Errorf("invalid UTF-8 todo: %v", err)
	}
}
