package clientio

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/url"
	"strings"
	"syscall"

	"github.com/wirebench/wirebench/internal/lazy"
)

// Reasons a request got no complete response, shared by every engine so
// that the same server behaviour counts the same way whatever the client.
var (
	ErrClosedBefore = errors.New("closed before response") // EOF before any byte of the response
	ErrClosedDuring = errors.New("closed mid-response")    // EOF inside the response
)

// IsClosed reports whether err means the server closed or reset the
// connection (not a timeout, not a malformed response): the case in which
// a request on a reused connection is retried once.
func IsClosed(err error) bool {
	return errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) ||
		errors.Is(err, syscall.ECONNRESET) || errors.Is(err, syscall.EPIPE) ||
		errors.Is(err, ErrClosedBefore)
}

// streamID matches the per-stream part of net/http's HTTP/2 errors
// ("stream error: stream ID 7; INTERNAL_ERROR"), which would otherwise
// make one failure reason per stream.
var streamID = lazy.Regexp(`stream ID [0-9]+; ?`)

// FailReason maps an error to a low-cardinality reason: the kind of
// failure without addresses, ports, URLs or stream IDs, so failures count
// by cause.
func FailReason(err error) string {
	var ne net.Error
	var ue *url.Error
	if errors.As(err, &ue) { // net/http: "Get "http://...": cause"
		err = ue.Err
	}
	switch {
	case errors.Is(err, ErrTooLarge), strings.Contains(err.Error(), "response headers exceeded"): // ours, net/http's
		return "response too large"
	case errors.Is(err, ErrMalformed), strings.Contains(err.Error(), "malformed HTTP"): // ours, net/http's
		return "malformed response"
	case errors.As(err, &ne) && ne.Timeout():
		return "timeout"
	case errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded):
		return "canceled"
	case errors.Is(err, syscall.ECONNREFUSED):
		return "connection refused"
	case errors.Is(err, syscall.ECONNRESET), errors.Is(err, syscall.EPIPE):
		return "connection reset"
	case errors.Is(err, ErrClosedDuring):
		return ErrClosedDuring.Error()
	case errors.Is(err, ErrClosedBefore), errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF):
		return ErrClosedBefore.Error()
	}
	var oe *net.OpError
	if errors.As(err, &oe) {
		inner := oe.Err
		for {
			u := errors.Unwrap(inner)
			if u == nil {
				break
			}
			inner = u
		}
		return fmt.Sprintf("%s: %v", oe.Op, inner)
	}
	return streamID().ReplaceAllString(err.Error(), "")
}

// OpError gives raw syscall errors the "op: errno" shape FailReason
// prints for net errors.
type OpError struct {
	Op  string
	Err error
}

func (e *OpError) Error() string { return e.Op + ": " + e.Err.Error() }
func (e *OpError) Unwrap() error { return e.Err }
