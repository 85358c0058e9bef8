package load

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"strings"
	"testing"
)

// TestParseResponseEdges pins the parser at its limits and on the rarer
// framings, each where an off-by-one would change what the load client
// counts: interim responses skipped, 101 final and bodiless, an empty
// header name, conflicting lengths after a zero, and the head and body
// limits at exactly their size and one past.
func TestParseResponseEdges(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, in string
		status   int
		body     string
		rest     string // left in the reader for the next response
		err      error
	}{
		{"103 then 200", "HTTP/1.1 103 Early Hints\r\nLink: </a>\r\n\r\nHTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nokX", 200, "ok", "X", nil},
		{"100 then 201", "HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 201 Created\r\nContent-Length: 1\r\n\r\nzX", 201, "z", "X", nil},
		{"101 is final and bodiless", "HTTP/1.1 101 Switching Protocols\r\nUpgrade: h2c\r\n\r\nnot a body", 101, "", "not a body", nil},
		{"empty header name", "HTTP/1.1 200 OK\r\n: x\r\nContent-Length: 0\r\n\r\n", 0, "", "", ErrMalformed},
		{"lengths 0 then 5", "HTTP/1.1 200 OK\r\nContent-Length: 0\r\nContent-Length: 5\r\n\r\nhello", 0, "", "", ErrMalformed},
		{"lengths 5 then 5", "HTTP/1.1 200 OK\r\nContent-Length: 5\r\nContent-Length: 5\r\n\r\nhelloX", 200, "hello", "X", nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for _, discard := range []bool{false, true} {
				br := bufio.NewReader(strings.NewReader(tc.in))
				var r h1Response
				_, err := parseResponse(br, &r, nil, discard, false)
				if tc.err != nil {
					if !errors.Is(err, tc.err) {
						t.Errorf("discard=%v: err = %v, want %v", discard, err, tc.err)
					}
					continue
				}
				if err != nil {
					t.Fatalf("discard=%v: %v", discard, err)
				}
				rest, _ := io.ReadAll(br)
				if r.Status != tc.status || r.BodyLen != len(tc.body) || string(rest) != tc.rest || !discard && string(r.Body) != tc.body {
					t.Errorf("discard=%v: status %d, body %q (%d bytes), rest %q; want %d, %q, %q", discard, r.Status, r.Body, r.BodyLen, rest, tc.status, tc.body, tc.rest)
				}
			}
		})
	}
}

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
	}{{maxHead, nil}, {maxHead + 1, ErrTooLarge}} {
		var r h1Response
		_, err := parseResponse(bufio.NewReader(strings.NewReader(head(tc.size))), &r, nil, false, false)
		if !errors.Is(err, tc.err) || err == nil && r.Status != 200 {
			t.Errorf("head of %d bytes: status %d, err %v; want err %v", tc.size, r.Status, err, tc.err)
		}
	}
	for _, tc := range []struct {
		length int64
		err    error
	}{{maxBody, nil}, {maxBody + 1, ErrTooLarge}} {
		in := io.MultiReader(strings.NewReader(fmt.Sprintf("HTTP/1.1 200 OK\r\nContent-Length: %d\r\n\r\n", tc.length)),
			io.LimitReader(zeros{}, tc.length))
		var r h1Response
		_, err := parseResponse(bufio.NewReader(in), &r, nil, false, false)
		if !errors.Is(err, tc.err) || err == nil && r.BodyLen != int(tc.length) {
			t.Errorf("kept body of %d bytes: %d read, err %v; want err %v", tc.length, r.BodyLen, err, tc.err)
		}
	}
}

type zeros struct{}

func (zeros) Read(p []byte) (int, error) { clear(p); return len(p), nil }
