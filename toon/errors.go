package toon

import (
	"errors"
	"fmt"
)

// Sentinel errors. Every error returned by this package wraps one of them,
// so callers can tell a truncated document (ErrCount) from a malformed one
// (ErrSyntax) with errors.Is.
var (
	// ErrSyntax reports text that is not TOON: bad indentation, a missing
	// colon, an invalid escape, a malformed header, ill-formed UTF-8.
	ErrSyntax = errors.New("syntax error")
	// ErrCount reports an array, table or row whose number of items, rows,
	// entries or cells differs from its header (strict mode).
	ErrCount = errors.New("count mismatch")
	// ErrDepth reports nesting deeper than the configured maximum.
	ErrDepth = errors.New("nesting too deep")
	// ErrDuplicateKey reports a key repeated among siblings (strict mode).
	ErrDuplicateKey = errors.New("duplicate key")
	// ErrType reports a TOON value that does not fit the Go destination,
	// or a Go value that has no TOON form.
	ErrType = errors.New("type mismatch")
	// ErrStream reports misuse of an Encoder or Decoder (a Row outside a
	// table, End before all rows, Next on a document without an array).
	ErrStream = errors.New("stream misuse")
)

// Error is a decoding error with its position. Line and Column are 1-based;
// Column counts bytes and is 0 when the error concerns a whole line.
type Error struct {
	Line, Column int
	Msg          string
	Err          error // the sentinel
}

func (e *Error) Error() string {
	switch {
	case e.Line == 0:
		return "toon: " + e.Msg
	case e.Column == 0:
		return fmt.Sprintf("toon: line %d: %s", e.Line, e.Msg)
	default:
		return fmt.Sprintf("toon: line %d, column %d: %s", e.Line, e.Column, e.Msg)
	}
}

func (e *Error) Unwrap() error { return e.Err }

// errorf builds an *Error; the message should not repeat the sentinel's text.
func errorf(sentinel error, line, col int, format string, a ...any) error {
	return &Error{Line: line, Column: col, Msg: sentinel.Error() + ": " + fmt.Sprintf(format, a...), Err: sentinel}
}
