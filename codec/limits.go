package codec

import (
	"errors"
	"fmt"
)

// Limits bound what a decoder accepts before it allocates or recurses. They
// are applied in one place, here, to every decoder we use but did not write:
//
//	format    depth and element counts          trailing data     declared lengths
//	msgpack   scanMsgpack (iterative, ours)      scanMsgpack       scanMsgpack: <= bytes left
//	JSON      scanJSON (iterative, ours)         scanJSON          -
//	CBOR      fxamacker DecOptions from Limits   library (refuses) library: <= bytes left
//	protobuf  RecursionLimit; scanProtobuf for   - (concatenation  library: <= bytes left
//	          unknown groups (iterative, ours)     is a merge)
//	TOON      toon.UnmarshalOptions.MaxDepth     toon (strict)     toon
//
// The scanners run before the library sees a byte, so a hostile body (8 M
// nested msgpack arrays, a 2^32-element map header) is refused without the
// library's recursion or preallocation ever running: the msgpack library's
// recursive Skip overflowed the goroutine stack on such a body and took the
// whole server down. (JSON's scan is skipped only where the body's bytes
// alone prove the limits and the library checks all the rest before it
// decodes: jsonWithinLimits.) The size of a body is bounded by the transport
// (httpapi's body limit, gRPC's MaxRecvMsgSize), not here.
type Limits struct {
	// MaxDepth bounds nesting of arrays, maps and objects (a scalar at top
	// level is depth 0, {"a":1} depth 1).
	MaxDepth int
	// MaxItems bounds the elements of one array or the pairs of one map.
	MaxItems int
}

// DefaultLimits are the limits of every registered codec. The API's bodies
// nest three levels deep (a list, a user, a timestamp); 64 leaves room for
// any unknown field a client sends while keeping every recursive decoder far
// from the stack limit.
var DefaultLimits = Limits{MaxDepth: 64, MaxItems: 1 << 20}

// Sentinel errors of the scanners; each error they return wraps one.
var (
	// ErrSyntax is a body that is not well-formed in its format (bad
	// token, truncated, invalid UTF-8 in a string).
	ErrSyntax = errors.New("malformed")
	// ErrDepth is nesting deeper than Limits.MaxDepth.
	ErrDepth = errors.New("nesting too deep")
	// ErrTooMany is an array or map with more than Limits.MaxItems
	// elements, or a length larger than the bytes left in the body.
	ErrTooMany = errors.New("length over the limit")
	// ErrTrailing is data after the one top-level value.
	ErrTrailing = errors.New("trailing data")
)

// scanError builds an error wrapping sentinel with its byte offset.
func scanError(format string, sentinel error, off int, detail string, a ...any) error {
	return fmt.Errorf("%s: %w at offset %d: %s", format, sentinel, off, fmt.Sprintf(detail, a...))
}

// ErrPanic is a third-party decoder that panicked on its input. The
// msgpack library does, on nil for a time.Time field (found by
// FuzzDecodeRequest); net/http would recover it but drop the connection
// without an answer, so the codecs turn it into an error.
var ErrPanic = errors.New("decoder failed")

// recoverDecode turns a panic in a library decoder into an error wrapping
// ErrPanic and ErrSyntax: the input is what made it fail. Use as
// defer recoverDecode("msgpack", &err).
func recoverDecode(format string, err *error) {
	if r := recover(); r != nil {
		*err = decodePanic(format, r)
	}
}

// decodePanic is the error a library's panic r becomes.
func decodePanic(format string, r any) error {
	return fmt.Errorf("%s: %w on this input (%w): %v", format, ErrPanic, ErrSyntax, r)
}
