package grpcweb

import (
	"bufio"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
)

// ErrBase64 is a gRPC-Web text body that is not base64.
var ErrBase64 = errors.New("grpcweb: malformed base64 text body")

// TextReader decodes a gRPC-Web text body (application/grpc-web-text):
// standard base64 whose writers may pad each chunk they send, so padding
// can end any 4-character group, not just the last. Each group is decoded
// on its own; a body whose length is not a multiple of 4, or a group that
// is not base64, is ErrBase64.
type TextReader struct {
	r    *bufio.Reader
	in   [4]byte
	buf  [3]byte
	out  []byte
	err  error
	read int64 // characters consumed, for error messages
}

// NewTextReader returns a TextReader of r.
func NewTextReader(r io.Reader) *TextReader { return &TextReader{r: bufio.NewReader(r)} }

func (t *TextReader) Read(p []byte) (int, error) {
	for len(t.out) == 0 {
		if t.err != nil {
			return 0, t.err
		}
		n, err := io.ReadFull(t.r, t.in[:])
		switch {
		case errors.Is(err, io.EOF):
			t.err = io.EOF
			continue
		case errors.Is(err, io.ErrUnexpectedEOF):
			t.err = fmt.Errorf("%w: body ends %d characters into a 4-character group (at %d)", ErrBase64, n, t.read)
			continue
		case err != nil:
			t.err = err
			continue
		}
		m, err := base64.StdEncoding.Decode(t.buf[:], t.in[:])
		if err != nil {
			t.err = fmt.Errorf("%w: group %q at %d", ErrBase64, t.in[:], t.read)
			continue
		}
		t.read += 4
		t.out = t.buf[:m]
	}
	n := copy(p, t.out)
	t.out = t.out[n:]
	return n, nil
}

// TextWriter encodes what is written to it as gRPC-Web text: each Write
// becomes its own padded base64 chunk, so that every chunk the client
// receives decodes by itself (what TextReader and browsers expect).
type TextWriter struct {
	w   io.Writer
	buf []byte
}

// NewTextWriter returns a TextWriter to w.
func NewTextWriter(w io.Writer) *TextWriter { return &TextWriter{w: w} }

func (t *TextWriter) Write(p []byte) (int, error) {
	if len(p) == 0 {
		return 0, nil
	}
	t.buf = base64.StdEncoding.AppendEncode(t.buf[:0], p)
	if _, err := t.w.Write(t.buf); err != nil {
		return 0, err
	}
	return len(p), nil
}
