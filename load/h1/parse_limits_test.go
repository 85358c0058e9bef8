package h1

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"strings"
	"testing"

	"github.com/wirebench/wirebench/load/clientio"
)

// TestParseResponseLimits: a head of exactly maxHead bytes and a kept body
// of exactly maxBody bytes are read; one byte more of either is refused.
func TestParseResponseLimits(t *testing.T) {
	t.Parallel()
	head := func(size int) string { // padding headers of under 1 KiB each: size bytes in all
		const start, end = "HTTP/1.1 200 OK\r\n", "Content-Length: 0\r\n\r\n"
		var sb strings.Builder
		sb.WriteString(start)
		for left := size - len(start) - len(end); left > 0; {
			n := min(left, 1000)
			if left-n > 0 && left-n < len("X: \r\n") { // keep the last line well-formed
				n -= len("X: \r\n")
			}
			sb.WriteString("X: " + strings.Repeat("p", n-len("X: \r\n")) + "\r\n")
			left -= n
		}
		sb.WriteString(end)
		if sb.Len() != size {
			t.Fatalf("head of %d bytes, want %d", sb.Len(), size)
		}
		return sb.String()
	}
	for _, tc := range []struct {
		size int
		err  error
	}{{clientio.MaxHead, nil}, {clientio.MaxHead + 1, clientio.ErrTooLarge}} {
		var r Response
		_, err := ParseResponse(bufio.NewReader(strings.NewReader(head(tc.size))), &r, nil, false, false)
		if !errors.Is(err, tc.err) || err == nil && r.Status != 200 {
			t.Errorf("head of %d bytes: status %d, err %v; want err %v", tc.size, r.Status, err, tc.err)
		}
	}
	for _, tc := range []struct {
		length int64
		err    error
	}{{clientio.MaxBody, nil}, {clientio.MaxBody + 1, clientio.ErrTooLarge}} {
		in := io.MultiReader(strings.NewReader(fmt.Sprintf("HTTP/1.1 200 OK\r\nContent-Length: %d\r\n\r\n", tc.length)),
			io.LimitReader(zeros{}, tc.length))
		var r Response
		_, err := ParseResponse(bufio.NewReader(in), &r, nil, false, false)
		if !errors.Is(err, tc.err) || err == nil && r.BodyLen != int(tc.length) {
			t.Errorf("kept body of %d bytes: %d read, err %v; want err %v", tc.length, r.BodyLen, err, tc.err)
		}
	}
}

type zeros struct{}

func (zeros) Read(p []byte) (int, error) { clear(p); return len(p), nil }
