// Package grpcweb reads and writes the framing of gRPC-Web bodies (the
// binary form, application/grpc-web+proto): each message is a 5-byte
// prefix (flags, then the length as a 32-bit big-endian number) and the
// message; the last frame has flag 0x80 and carries the trailers as
// HTTP/1 header lines ("grpc-status: 0\r\n"). Clients of the REST port's
// gRPC-Web endpoint (tests, the load engine) use it to build requests and
// check responses byte for byte.
package grpcweb

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/textproto"
	"strings"
)

// Frame flags.
const (
	FlagCompressed byte = 0x01
	FlagTrailer    byte = 0x80
)

// PrefixLen is the size of a frame's prefix.
const PrefixLen = 5

// Errors of Reader and ParseTrailers; returned wrapped, with context.
var (
	ErrTooLarge  = errors.New("grpcweb: frame larger than the limit")
	ErrTruncated = errors.New("grpcweb: body ends inside a frame")
	ErrMalformed = errors.New("grpcweb: malformed frame")
)

// AppendFrame appends one frame (prefix and payload) to dst.
func AppendFrame(dst []byte, flags byte, payload []byte) []byte {
	dst = append(dst, flags)
	dst = binary.BigEndian.AppendUint32(dst, uint32(len(payload)))
	return append(dst, payload...)
}

// Reader reads frames from a gRPC-Web body, refusing any frame whose
// declared length is over its limit before reading (or allocating) it.
type Reader struct {
	r   io.Reader
	max uint32
	n   int // frames read
	buf []byte
}

// NewReader returns a Reader of r with frames of at most max bytes (max
// <= 0: 4 MiB, grpc-go's default message limit).
func NewReader(r io.Reader, max int) *Reader {
	if max <= 0 || max > 1<<31 {
		max = 4 << 20
	}
	return &Reader{r: r, max: uint32(max)}
}

// Next returns the next frame's flags and payload; the payload is valid
// until the next call. At the end of the body between frames it returns
// io.EOF; inside a frame, ErrTruncated. Unknown flag bits are
// ErrMalformed (the spec defines only 0x01 and 0x80).
func (r *Reader) Next() (flags byte, payload []byte, err error) {
	var prefix [PrefixLen]byte
	if n, err := io.ReadFull(r.r, prefix[:]); err != nil {
		if errors.Is(err, io.EOF) && n == 0 {
			return 0, nil, io.EOF
		}
		if errors.Is(err, io.ErrUnexpectedEOF) {
			return 0, nil, fmt.Errorf("%w: frame %d: %d of %d prefix bytes", ErrTruncated, r.n+1, n, PrefixLen)
		}
		return 0, nil, fmt.Errorf("grpcweb: frame %d: %w", r.n+1, err)
	}
	flags = prefix[0]
	if flags&^(FlagCompressed|FlagTrailer) != 0 {
		return 0, nil, fmt.Errorf("%w: frame %d: flags %#02x", ErrMalformed, r.n+1, flags)
	}
	size := binary.BigEndian.Uint32(prefix[1:])
	if size > r.max {
		return 0, nil, fmt.Errorf("%w: frame %d declares %d bytes, limit %d", ErrTooLarge, r.n+1, size, r.max)
	}
	if cap(r.buf) < int(size) {
		r.buf = make([]byte, size)
	}
	r.buf = r.buf[:size]
	if n, err := io.ReadFull(r.r, r.buf); err != nil {
		if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
			return 0, nil, fmt.Errorf("%w: frame %d: %d of %d payload bytes", ErrTruncated, r.n+1, n, size)
		}
		return 0, nil, fmt.Errorf("grpcweb: frame %d: %w", r.n+1, err)
	}
	r.n++
	return flags, r.buf, nil
}

// ParseTrailers parses a trailer frame's payload: header lines, each
// ended by CRLF (a last line without it is accepted), names
// case-insensitive. A line without a colon or with a name that is not a
// token is ErrMalformed.
func ParseTrailers(p []byte) (http.Header, error) {
	h := http.Header{}
	s := string(p)
	for i := 1; s != ""; i++ {
		line, rest, _ := strings.Cut(s, "\r\n")
		s = rest
		if line == "" {
			continue
		}
		name, value, ok := strings.Cut(line, ":")
		if !ok || !validName(name) {
			return nil, fmt.Errorf("%w: trailer line %d %q", ErrMalformed, i, truncate(line, 64))
		}
		h.Add(textproto.CanonicalMIMEHeaderKey(name), strings.TrimSpace(value))
	}
	return h, nil
}

// validName reports whether s is an HTTP token (RFC 9110 tchar).
func validName(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || strings.IndexByte("!#$%&'*+-.^_`|~", c) >= 0 {
			continue
		}
		return false
	}
	return true
}

func truncate(s string, n int) string {
	if len(s) > n {
		return s[:n] + "…"
	}
	return s
}
