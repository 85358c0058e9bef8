package api

import (
	"fmt"
	"strings"
	"unicode/utf8"
)

// Limits on field lengths, in bytes. They are part of the API contract.
const (
	MaxNameLen  = 200
	MaxEmailLen = 254 // RFC 5321's path limit
	MaxTextLen  = 2000
	MaxEchoLen  = 64 << 10
)

// Validate reports whether u's client-supplied fields are acceptable.
// ID and CreatedAt are ignored: the server assigns them.
func (u *User) Validate() error {
	if err := checkString("name", u.Name, MaxNameLen, true); err != nil {
		return err
	}
	if err := checkString("email", u.Email, MaxEmailLen, true); err != nil {
		return err
	}
	if !validEmail(u.Email) {
		return fmt.Errorf("%w: email %q is not of the form local@domain", ErrInvalid, u.Email)
	}
	return nil
}

// Validate reports whether t's client-supplied fields are acceptable.
func (t *Todo) Validate() error {
	return checkString("text", t.Text, MaxTextLen, true)
}

// Validate reports whether r's fields are acceptable. Empty messages are allowed.
func (r *EchoRequest) Validate() error {
	if err := checkString("first_message", r.FirstMessage, MaxEchoLen, false); err != nil {
		return err
	}
	return checkString("second_message", r.SecondMessage, MaxEchoLen, false)
}

func checkString(field, s string, max int, required bool) error {
	switch {
	case required && strings.TrimSpace(s) == "":
		return fmt.Errorf("%w: %s is required", ErrInvalid, field)
	case len(s) > max:
		return fmt.Errorf("%w: %s is %d bytes, limit %d", ErrInvalid, field, len(s), max)
	case !utf8.ValidString(s):
		return fmt.Errorf("%w: %s is not valid UTF-8", ErrInvalid, field)
	}
	return nil
}

// validEmail checks the shape local@domain.tld without spaces; deliverability
// is not the API's business.
func validEmail(s string) bool {
	at := strings.IndexByte(s, '@')
	if at <= 0 || at != strings.LastIndexByte(s, '@') {
		return false
	}
	domain := s[at+1:]
	dot := strings.LastIndexByte(domain, '.')
	if dot <= 0 || dot == len(domain)-1 {
		return false
	}
	return !strings.ContainsAny(s, " \t\r\n<>(),;:\"[]\\")
}
