package h1

import (
	"errors"
	"io"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/wirebench/wirebench/load/clientio"
)

// ReadLimited keeps a body of exactly limit bytes, refuses one more, and
// never grows its buffer past limit+1 (bytes.Buffer doubled it to 2×),
// give or take the allocator's rounding to a page.
func TestReadLimited(t *testing.T) {
	const limit = 1 << 20
	for _, tc := range []struct {
		n       int
		tooBig  bool
		oneByte bool // the reader returns a byte at a time
	}{{0, false, false}, {1, false, true}, {limit - 1, false, false}, {limit, false, true}, {limit, false, false}, {limit + 1, true, false}, {limit + 1, true, true}, {3 * limit, true, false}} {
		var r io.Reader = strings.NewReader(strings.Repeat("x", tc.n))
		if tc.oneByte {
			r = iotest.OneByteReader(r)
		}
		b, err := ReadLimited(nil, r, limit)
		switch {
		case tc.tooBig && !errors.Is(err, clientio.ErrTooLarge):
			t.Errorf("%d bytes: err %v, want ErrTooLarge", tc.n, err)
		case !tc.tooBig && (err != nil || len(b) != tc.n || strings.Count(string(b), "x") != tc.n):
			t.Errorf("%d bytes: got %d, %v", tc.n, len(b), err)
		case cap(b) > limit+1+8<<10:
			t.Errorf("%d bytes: buffer grew to %d, past the limit+1", tc.n, cap(b))
		}
	}
	if _, err := ReadLimited(nil, iotest.ErrReader(io.ErrUnexpectedEOF), limit); !errors.Is(err, io.ErrUnexpectedEOF) {
		t.Errorf("read error: got %v", err)
	}
}
