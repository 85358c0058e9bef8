package api

import "errors"

// Sentinel errors. Transports map them to status codes through one table each
// (httpapi.statusOf, grpcapi.codeOf); wrap them with detail using %w.
var (
	ErrNotFound        = errors.New("not found")
	ErrInvalid         = errors.New("invalid argument")
	ErrMalformed       = errors.New("malformed body")
	ErrTooLarge        = errors.New("body too large")
	ErrUnsupportedType = errors.New("unsupported content type")
	ErrNotAcceptable   = errors.New("not acceptable")
	ErrMethod          = errors.New("method not allowed")
	// ErrTimeout is a request body that did not arrive within the
	// server's read timeout.
	ErrTimeout = errors.New("request timeout")
	// ErrUnavailable is load shed: the server is at a resource limit
	// (the memory of replies being written) and the client may retry.
	ErrUnavailable = errors.New("unavailable")
)

// Code returns the stable name of err's sentinel, as used in Error.Code.
func Code(err error) string {
	switch {
	case errors.Is(err, ErrNotFound):
		return "not_found"
	case errors.Is(err, ErrInvalid):
		return "invalid_argument"
	case errors.Is(err, ErrMalformed):
		return "malformed"
	case errors.Is(err, ErrTooLarge):
		return "too_large"
	case errors.Is(err, ErrUnsupportedType):
		return "unsupported_media_type"
	case errors.Is(err, ErrNotAcceptable):
		return "not_acceptable"
	case errors.Is(err, ErrMethod):
		return "method_not_allowed"
	case errors.Is(err, ErrTimeout):
		return "timeout"
	case errors.Is(err, ErrUnavailable):
		return "unavailable"
	default:
		return "internal"
	}
}
