// Package clientio is what every protocol client of the load engine
// shares, so that the same server behaviour counts the same way whatever
// the client: the response size limits (MaxHead, MaxBody) and the
// parsers' sentinel errors, and how an error becomes a low-cardinality
// failure reason (FailReason) or a closed connection worth one retry
// (IsClosed); and how a net/http client sends (Send, NoRedirect, and the
// per-request timeout Timed keeps). It imports nothing of wirebench but
// internal/lazy.
package clientio
