package clientio

import (
	"bufio"
	"errors"
	"fmt"
	"io"
)

// Sentinel errors of the clients' parsers; each is wrapped with detail
// where it is returned (load.ErrMalformed and load.ErrTooLarge are these).
var (
	// ErrMalformed reports a response the HTTP/1.1, HTTP/2 or RESP parser
	// cannot read.
	ErrMalformed = errors.New("load: malformed response")
	// ErrTooLarge reports a response over the client's size limits
	// (MaxHead, MaxBody).
	ErrTooLarge = errors.New("load: response too large")
)

// Response size limits (README: limits). A response over them fails
// with ErrTooLarge, so no peer can make the client grow without bound.
const (
	// MaxBody bounds a response body the client keeps in memory (to check
	// or decode it); a discarded body is counted, not kept, and only the
	// request timeout bounds it.
	MaxBody = 64 << 20
	// MaxHead bounds a response's status line and headers, 1xx heads
	// included (Go's net/http allows 1 MiB by default; a server sending
	// more is broken or hostile).
	MaxHead = 1 << 20
)

// ReadErr turns a short read into io.ErrUnexpectedEOF and a line longer
// than the read buffer into ErrMalformed.
func ReadErr(err error) error {
	switch err {
	case nil:
		return nil
	case io.EOF:
		return io.ErrUnexpectedEOF
	case bufio.ErrBufferFull:
		return fmt.Errorf("%w: header line too long", ErrMalformed)
	}
	return err
}
