package h1

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"strings"
	"testing"

	"github.com/wirebench/wirebench/load/clientio"
)

func TestParseResponse(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, in    string
		status      int
		body, ctype string
		close       bool
		err         error
		rest        string // left in the reader for the next response
	}{
		{"content-length", "HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: 5\r\n\r\nhello", 200, "hello", "text/plain", false, nil, ""},
		{"chunked", "HTTP/1.1 201 Created\r\nTransfer-Encoding: chunked\r\n\r\n3;x=y\r\nabc\r\n2\r\nde\r\n0\r\nTrailer: t\r\n\r\n", 201, "abcde", "", false, nil, ""},
		{"no content", "HTTP/1.1 204 No Content\r\n\r\n", 204, "", "", false, nil, ""},
		{"to eof", "HTTP/1.1 200 OK\r\n\r\nuntil the end", 200, "until the end", "", true, nil, ""},
		{"connection close", "HTTP/1.1 500 Oops\r\nconnection: close\r\ncontent-length: 0\r\n\r\n", 500, "", "", true, nil, ""},
		{"http/1.0", "HTTP/1.0 200 OK\r\nContent-Length: 1\r\n\r\nx", 200, "x", "", true, nil, ""},
		{"bare LF", "HTTP/1.1 200 OK\nContent-Length: 2\n\nok", 200, "ok", "", false, nil, ""},
		{"short body", "HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nabc", 200, "abc", "", false, io.ErrUnexpectedEOF, ""},
		{"bad status", "HTTP/1.1 2x0 OK\r\n\r\n", 0, "", "", false, clientio.ErrMalformed, ""},
		{"not http", "SSH-2.0-OpenSSH\r\n\r\n", 0, "", "", false, clientio.ErrMalformed, ""},
		{"bad length", "HTTP/1.1 200 OK\r\nContent-Length: -1\r\n\r\n", 200, "", "", false, clientio.ErrMalformed, ""},
		{"conflicting lengths", "HTTP/1.1 200 OK\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\nab", 200, "", "", false, clientio.ErrMalformed, ""},
		{"bad chunk", "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n", 200, "", "", false, clientio.ErrMalformed, ""},
		{"header no colon", "HTTP/1.1 200 OK\r\nbogus\r\n\r\n", 200, "", "", false, clientio.ErrMalformed, ""},
		{"truncated headers", "HTTP/1.1 200 OK\r\nContent-Len", 200, "", "", false, io.ErrUnexpectedEOF, ""},
		// Interim responses are skipped; 101 is final and bodiless; the
		// next response's bytes stay in the reader.
		{"103 then 200", "HTTP/1.1 103 Early Hints\r\nLink: </a>\r\n\r\nHTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nokX", 200, "ok", "", false, nil, "X"},
		{"100 then 201", "HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 201 Created\r\nContent-Length: 1\r\n\r\nzX", 201, "z", "", false, nil, "X"},
		{"101 is final and bodiless", "HTTP/1.1 101 Switching Protocols\r\nUpgrade: h2c\r\n\r\nnot a body", 101, "", "", false, nil, "not a body"},
		{"empty header name", "HTTP/1.1 200 OK\r\n: x\r\nContent-Length: 0\r\n\r\n", 0, "", "", false, clientio.ErrMalformed, ""},
		{"lengths 0 then 5", "HTTP/1.1 200 OK\r\nContent-Length: 0\r\nContent-Length: 5\r\n\r\nhello", 0, "", "", false, clientio.ErrMalformed, ""},
		{"lengths 5 then 5", "HTTP/1.1 200 OK\r\nContent-Length: 5\r\nContent-Length: 5\r\n\r\nhelloX", 200, "hello", "", false, nil, "X"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			for _, discard := range []bool{false, true} {
				var r Response
				br := bufio.NewReader(strings.NewReader(tc.in))
				_, err := ParseResponse(br, &r, nil, discard, false)
				if tc.err != nil {
					if !errors.Is(err, tc.err) {
						t.Errorf("discard=%v: err = %v, want %v", discard, err, tc.err)
					}
					continue
				}
				if err != nil {
					t.Fatalf("discard=%v: %v", discard, err)
				}
				if r.Status != tc.status || string(r.ContentType) != tc.ctype || r.Close != tc.close || r.BodyLen != len(tc.body) {
					t.Errorf("discard=%v: got %d %q close=%v len=%d", discard, r.Status, r.ContentType, r.Close, r.BodyLen)
				}
				if !discard && string(r.Body) != tc.body {
					t.Errorf("body %q, want %q", r.Body, tc.body)
				}
				if rest, _ := io.ReadAll(br); string(rest) != tc.rest {
					t.Errorf("discard=%v: %q left in the reader, want %q", discard, rest, tc.rest)
				}
			}
		})
	}
}

// TestParsePipelined: two responses back to back parse in sequence, so the
// parser consumes exactly one response (keep-alive stays in sync).
func TestParsePipelined(t *testing.T) {
	t.Parallel()
	in := "HTTP/1.1 200 OK\r\nContent-Length: 1\r\n\r\naHTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n1\r\nb\r\n0\r\n\r\n"
	br := bufio.NewReader(strings.NewReader(in))
	var r Response
	var got []string
	for range 2 {
		if _, err := ParseResponse(br, &r, nil, false, false); err != nil {
			t.Fatal(err)
		}
		got = append(got, string(r.Body))
	}
	if strings.Join(got, ",") != "a,b" || br.Buffered() != 0 {
		t.Errorf("bodies %v, %d bytes left", got, br.Buffered())
	}
}

// FuzzParseResponse: the parser never panics, never reports a body longer
// than its input, and keeps the kept and discarded body lengths equal.
func FuzzParseResponse(f *testing.F) {
	for _, s := range []string{
		"HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nhello",
		"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n0\r\n\r\n",
		"HTTP/1.0 404 Not Found\r\n\r\nbody",
		"HTTP/1.1 204 No Content\r\nConnection: close\r\n\r\n",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		var kept, dropped Response
		_, err1 := ParseResponse(bufio.NewReaderSize(bytes.NewReader(in), 64), &kept, nil, false, false)
		_, err2 := ParseResponse(bufio.NewReaderSize(bytes.NewReader(in), 64), &dropped, nil, true, false)
		if (err1 == nil) != (err2 == nil) {
			t.Fatalf("keep err %v, discard err %v", err1, err2)
		}
		if err1 != nil {
			return
		}
		if kept.BodyLen > len(in) || len(kept.Body) != kept.BodyLen || dropped.BodyLen != kept.BodyLen {
			t.Fatalf("body %d (len %d), discarded %d, input %d", kept.BodyLen, len(kept.Body), dropped.BodyLen, len(in))
		}
		if kept.Status < 100 || kept.Status > 999 {
			t.Fatalf("status %d", kept.Status)
		}
	})
}
