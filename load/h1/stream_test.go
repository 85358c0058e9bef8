package h1

import (
	"bufio"
	"bytes"
	"errors"
	"strings"
	"testing"

	"github.com/wirebench/wirebench/load/clientio"
)

// streamParse runs Stream over in, fed step bytes at a time, then EOF.
func streamParse(in []byte, step int, keep bool) (r *Response, used int, err error) {
	var s Stream
	s.Reset(keep, false)
	for used < len(in) {
		k := min(step, len(in)-used)
		n, done, err := s.Feed(in[used : used+k])
		used += n
		if err != nil {
			return &s.Resp, used, err
		}
		if done {
			return &s.Resp, used, nil
		}
	}
	_, err = s.EOF()
	return &s.Resp, used, err
}

func TestStream(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, in string
		status   int
		body     string
		err      error
	}{
		{"early hints", "HTTP/1.1 103 Early Hints\r\nLink: </s.css>\r\n\r\nHTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok", 200, "ok", nil},
		{"chunked", "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nok\r\n0\r\n\r\n", 200, "ok", nil},
		{"to eof", "HTTP/1.0 200 OK\r\n\r\nuntil the end", 200, "until the end", nil},
		{"304", "HTTP/1.1 304 Not Modified\r\nContent-Length: 100\r\n\r\n", 304, "", nil},
		{"cut", "HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nok", 200, "", errors.New("unexpected EOF")},
		{"endless head", "HTTP/1.1 200 OK\r\n" + strings.Repeat("X-Pad: "+strings.Repeat("a", 1000)+"\r\n", 1100), 200, "", clientio.ErrTooLarge},
		{"endless line", "HTTP/1.1 200 OK\r\nX: " + strings.Repeat("a", clientio.MaxHead+1), 200, "", clientio.ErrTooLarge},
		{"long chunk line", "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n" + strings.Repeat("0", maxChunkLine+1), 200, "", clientio.ErrMalformed},
	}
	for _, tc := range tests {
		for _, step := range []int{1, 7, 1 << 20} {
			r, _, err := streamParse([]byte(tc.in), step, true)
			switch {
			case tc.err != nil:
				if err == nil || (!errors.Is(err, tc.err) && err.Error() != tc.err.Error()) {
					t.Errorf("%s/%d: err %v, want %v", tc.name, step, err, tc.err)
				}
			case err != nil:
				t.Errorf("%s/%d: %v", tc.name, step, err)
			case r.Status != tc.status || string(r.Body) != tc.body:
				t.Errorf("%s/%d: %d %q, want %d %q", tc.name, step, r.Status, r.Body, tc.status, tc.body)
			}
		}
	}
}

// FuzzStreamMatchesParse: the event loop's push parser and the lean
// client's pull parser agree on every input the pull parser accepts —
// status, body, close, bytes consumed — however the input is split.
func FuzzStreamMatchesParse(f *testing.F) {
	for _, s := range []string{
		"HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nhello",
		"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n0\r\nT: 1\r\n\r\n",
		"HTTP/1.0 404 Not Found\r\n\r\nbody",
		"HTTP/1.1 103 Early Hints\r\n\r\nHTTP/1.1 204 No Content\r\nConnection: close\r\n\r\nextra",
	} {
		f.Add([]byte(s), uint8(3))
	}
	f.Fuzz(func(t *testing.T, in []byte, step uint8) {
		var want Response
		rd := bytes.NewReader(in)
		br := bufio.NewReaderSize(rd, len(in)+16) // no line is too long for it
		body, perr := ParseResponse(br, &want, nil, false, false)
		got, used, serr := streamParse(in, int(step)+1, true)
		if perr != nil {
			if serr == nil && !errors.Is(perr, clientio.ErrTooLarge) {
				t.Fatalf("pull: %v; push accepted %d %q", perr, got.Status, got.Body)
			}
			return
		}
		if serr != nil {
			t.Fatalf("push: %v; pull accepted %d %q", serr, want.Status, body)
		}
		pulled := len(in) - rd.Len() - br.Buffered()
		if got.Status != want.Status || !bytes.Equal(got.Body, body) || got.Close != want.Close || used != pulled {
			t.Fatalf("push %d %q close=%v used %d; pull %d %q close=%v used %d",
				got.Status, got.Body, got.Close, used, want.Status, body, want.Close, pulled)
		}
	})
}
