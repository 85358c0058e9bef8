// Package traceparent makes and reads W3C Trace Context traceparent
// values (https://www.w3.org/TR/trace-context/#traceparent-header):
//
//	00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01
//	version-trace id (16 bytes)------------parent id (8)---flags
//
// The load clients send one per request, with a fresh random trace ID and
// the sampled flag, so that a slow request the run reports can be found
// in the server's logs and traces. Gen makes IDs without allocating or
// locking (one per worker); Put writes a value in place into a request
// serialized once.
package traceparent

import (
	crand "crypto/rand"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"math/rand/v2"
)

// Header is the header's (and gRPC metadata key's) name.
const Header = "traceparent"

// Len is the length of a version-00 traceparent value.
const Len = 55

// ErrMalformed is returned by Parse for a value that is not a valid
// version-00 traceparent.
var ErrMalformed = errors.New("traceparent: malformed")

// ID is a trace ID; the zero ID is invalid (and means "none" in an
// Outcome).
type ID [16]byte

// String is the ID's 32 lowercase hex digits, or "" for the zero ID.
func (id ID) String() string {
	if id.IsZero() {
		return ""
	}
	return hex.EncodeToString(id[:])
}

// IsZero reports whether id is the zero (invalid) ID.
func (id ID) IsZero() bool { return id == ID{} }

// SpanID is a parent (span) ID.
type SpanID [8]byte

// Gen makes random trace and span IDs. It is not safe for concurrent use:
// each worker owns one.
type Gen struct {
	r rand.ChaCha8
}

// NewGen returns a generator seeded from crypto/rand, so that two runs,
// or two segments of one, never send the same IDs.
func NewGen() *Gen {
	var seed [32]byte
	_, _ = crand.Read(seed[:]) // never fails (Go 1.24+)
	return &Gen{r: *rand.NewChaCha8(seed)}
}

// NewSeededGen returns a generator with a fixed seed, for tests.
func NewSeededGen(seed [32]byte) *Gen { return &Gen{r: *rand.NewChaCha8(seed)} }

// Next returns a fresh trace ID and span ID, neither zero.
func (g *Gen) Next() (ID, SpanID) {
	var id ID
	var sp SpanID
	for id.IsZero() {
		binary.LittleEndian.PutUint64(id[:8], g.r.Uint64())
		binary.LittleEndian.PutUint64(id[8:], g.r.Uint64())
	}
	for sp == (SpanID{}) {
		binary.LittleEndian.PutUint64(sp[:], g.r.Uint64())
	}
	return id, sp
}

// Placeholder is a valid-looking value of Len bytes to serialize into a
// request before Put overwrites it.
const Placeholder = "00-00000000000000000000000000000001-0000000000000001-01"

// Put writes the traceparent of id and span, sampled, into dst[:Len].
func Put(dst []byte, id ID, span SpanID) {
	_ = dst[Len-1]
	dst[0], dst[1], dst[2] = '0', '0', '-'
	hex.Encode(dst[3:35], id[:])
	dst[35] = '-'
	hex.Encode(dst[36:52], span[:])
	dst[52], dst[53], dst[54] = '-', '0', '1'
}

// Append appends the traceparent of id and span to b.
func Append(b []byte, id ID, span SpanID) []byte {
	n := len(b)
	b = append(b, Placeholder...)
	Put(b[n:], id, span)
	return b
}

// Parse reads a traceparent value as the W3C spec's version 00 defines it:
// lowercase hex, a non-zero trace and parent ID. Surrounding spaces and
// tabs are ignored. A higher version is read by its version-00 prefix, as
// the spec asks of a version-00 reader.
func Parse(s string) (id ID, span SpanID, flags byte, err error) {
	for len(s) > 0 && (s[0] == ' ' || s[0] == '\t') {
		s = s[1:]
	}
	for len(s) > 0 && (s[len(s)-1] == ' ' || s[len(s)-1] == '\t') {
		s = s[:len(s)-1]
	}
	if len(s) < Len {
		return id, span, 0, fmt.Errorf("%w: %d bytes, want %d", ErrMalformed, len(s), Len)
	}
	var ver [1]byte
	if !lowerHex(s[0:2]) || s[2] != '-' || s[35] != '-' || s[52] != '-' {
		return id, span, 0, fmt.Errorf("%w: want 00-<32 hex>-<16 hex>-<2 hex>", ErrMalformed)
	}
	_, _ = hex.Decode(ver[:], []byte(s[0:2]))
	switch {
	case ver[0] == 0xff:
		return id, span, 0, fmt.Errorf("%w: version ff", ErrMalformed)
	case ver[0] == 0 && len(s) != Len:
		return id, span, 0, fmt.Errorf("%w: version 00 with %d bytes, want %d", ErrMalformed, len(s), Len)
	case ver[0] != 0 && len(s) > Len && s[Len] != '-':
		return id, span, 0, fmt.Errorf("%w: version %02x: no '-' after the flags", ErrMalformed, ver[0])
	}
	if !lowerHex(s[3:35]) || !lowerHex(s[36:52]) || !lowerHex(s[53:55]) {
		return id, span, 0, fmt.Errorf("%w: not lowercase hex", ErrMalformed)
	}
	_, _ = hex.Decode(id[:], []byte(s[3:35]))
	_, _ = hex.Decode(span[:], []byte(s[36:52]))
	var fl [1]byte
	_, _ = hex.Decode(fl[:], []byte(s[53:55]))
	if id.IsZero() {
		return id, span, 0, fmt.Errorf("%w: zero trace ID", ErrMalformed)
	}
	if span == (SpanID{}) {
		return id, span, 0, fmt.Errorf("%w: zero parent ID", ErrMalformed)
	}
	return id, span, fl[0], nil
}

func lowerHex(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return false
		}
	}
	return true
}
