package h1

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"math/bits"
	"sync"

	"github.com/wirebench/wirebench/load/clientio"
)

// Response is a parsed HTTP/1.1 response. Body and ContentType alias
// buffers reused by the next parse.
type Response struct {
	Status      int
	ContentType []byte
	// ContentEncoding is the response's content coding ("gzip"), empty
	// when none.
	ContentEncoding []byte
	Body            []byte
	Close           bool // the server asked to close, or the body ran to EOF
	BodyLen         int  // body bytes received, kept or discarded
	ToEOF           bool // the body is delimited by the end of the connection
	// Keep names headers (lower case) whose values the parse keeps in
	// Kept, Seen[i] telling whether Keep[i] was there (the last value when
	// repeated): a flow's captures and checks. Set Keep, and Kept and Seen
	// of its length, before the exchange.
	Keep  []string
	Kept  [][]byte
	Seen  []bool
	ctBuf [128]byte
	ceBuf [16]byte
}

// ParseResponse reads one response from br: status line, headers, and a
// body framed by Content-Length, chunked encoding or the end of the
// connection. It keeps the body in body (grown as needed) unless discard
// is set, and returns the body buffer for reuse. noBody is set for a
// response to HEAD.
//
// It is deliberately minimal — what a load client needs to stay in sync
// with the server and check the response — and fuzzed (FuzzParseResponse).
func ParseResponse(br *bufio.Reader, r *Response, body []byte, discard, noBody bool) ([]byte, error) {
	var h headState
	for {
		line, err := br.ReadSlice('\n')
		if err != nil {
			return body, clientio.ReadErr(err)
		}
		if err := h.line(r, line); err != nil {
			return body, err
		}
		if !h.done {
			continue
		}
		if !h.interim { // 1xx (103 Early Hints, 100 Continue): the final response follows
			break
		}
		h = headState{}
	}
	body = body[:0]
	r.BodyLen, r.ToEOF = 0, false
	if h.bodiless(noBody) {
		r.Body = body
		return body, nil
	}
	var err error
	switch {
	case h.chunked:
		body, err = ReadChunked(br, body, discard, &r.BodyLen)
	case h.length >= 0:
		if h.length > clientio.MaxBody && !discard {
			return body, fmt.Errorf("%w: body of %d bytes", clientio.ErrTooLarge, h.length)
		}
		body, err = readN(br, body, h.length, discard, &r.BodyLen)
	default: // until EOF
		r.Close, r.ToEOF = true, true
		body, err = readToEOF(br, body, discard, &r.BodyLen)
	}
	r.Body = body
	return body, err
}

// headState parses a response head line by line; both parsers (pull:
// ParseResponse, push: Stream) feed it, so they agree on every header.
type headState struct {
	n       int   // lines seen
	size    int   // bytes seen, bounded by maxHead
	length  int64 // Content-Length, -1 when absent
	status  int
	chunked bool
	done    bool // the empty line ended the head
	interim bool // a 1xx other than 101: skip it, the final response follows
}

// bodiless reports whether the response has no body whatever its headers say.
func (h *headState) bodiless(noBody bool) bool {
	return noBody || h.status == 204 || h.status == 304 || h.status/100 == 1
}

// line takes one line of the head, with its line ending.
func (h *headState) line(r *Response, line []byte) error {
	if h.size += len(line); h.size > clientio.MaxHead {
		return fmt.Errorf("%w: response head over %d bytes", clientio.ErrTooLarge, clientio.MaxHead)
	}
	h.n++
	if h.n == 1 {
		return h.statusLine(r, line)
	}
	line = trimCRLF(line)
	if len(line) == 0 {
		h.done = true
		h.interim = h.status/100 == 1 && h.status != 101
		return nil
	}
	colon := bytes.IndexByte(line, ':')
	if colon <= 0 {
		return fmt.Errorf("%w: header %q", clientio.ErrMalformed, trim(line))
	}
	name, val := line[:colon], bytes.TrimSpace(line[colon+1:])
	switch {
	case asciiEq(name, "content-length"):
		n, ok := parseUint(val)
		if !ok || (h.length >= 0 && n != h.length) {
			return fmt.Errorf("%w: Content-Length %q", clientio.ErrMalformed, trim(val))
		}
		h.length = n
	case asciiEq(name, "transfer-encoding"):
		h.chunked = asciiHasSuffixFold(val, "chunked")
	case asciiEq(name, "connection"):
		if asciiEq(val, "close") {
			r.Close = true
		} else if asciiEq(val, "keep-alive") {
			r.Close = false
		}
	case asciiEq(name, "content-type"):
		r.ContentType = append(r.ctBuf[:0], val...)
	case asciiEq(name, "content-encoding"):
		r.ContentEncoding = append(r.ceBuf[:0], val...)
	}
	for i, k := range r.Keep {
		if asciiEq(name, k) {
			r.Kept[i], r.Seen[i] = append(r.Kept[i][:0], val...), true
		}
	}
	return nil
}

// statusLine reads "HTTP/1.1 200 OK\r\n".
func (h *headState) statusLine(r *Response, line []byte) error {
	if len(line) < 12 || !bytes.HasPrefix(line, []byte("HTTP/1.")) || line[8] != ' ' {
		return fmt.Errorf("%w: status line %q", clientio.ErrMalformed, trim(line))
	}
	st := 0
	for _, c := range line[9:12] {
		if c < '0' || c > '9' {
			return fmt.Errorf("%w: status code %q", clientio.ErrMalformed, line[9:12])
		}
		st = st*10 + int(c-'0')
	}
	if st < 100 {
		return fmt.Errorf("%w: status code %d", clientio.ErrMalformed, st)
	}
	h.status, h.length = st, -1
	r.Status = st
	r.Close = line[7] == '0' // HTTP/1.0 closes unless told otherwise
	r.ContentType = r.ContentType[:0]
	r.ContentEncoding = r.ContentEncoding[:0]
	for i := range r.Kept {
		r.Kept[i], r.Seen[i] = r.Kept[i][:0], false
	}
	return nil
}

func readN(br *bufio.Reader, body []byte, n64 int64, discard bool, cnt *int) ([]byte, error) {
	if discard {
		for n64 > 0 { // Discard takes an int: step through a huge Content-Length
			k, err := br.Discard(int(min(n64, 1<<30)))
			*cnt += k
			n64 -= int64(k)
			if err != nil {
				return body, clientio.ReadErr(err)
			}
		}
		return body, nil
	}
	n := int(n64)
	if cap(body)-len(body) < n {
		nb := getBody(len(body) + n)[:len(body)]
		copy(nb, body)
		putBody(body)
		body = nb
	}
	k, err := io.ReadFull(br, body[len(body):len(body)+n])
	*cnt += k
	return body[:len(body)+k], clientio.ReadErr(err)
}

func ReadChunked(br *bufio.Reader, body []byte, discard bool, cnt *int) ([]byte, error) {
	total := 0
	for {
		line, err := br.ReadSlice('\n')
		if err != nil {
			return body, clientio.ReadErr(err)
		}
		line = trimCRLF(line)
		if i := bytes.IndexByte(line, ';'); i >= 0 {
			line = line[:i] // chunk extensions
		}
		size, ok := parseHex(bytes.TrimSpace(line))
		if !ok {
			return body, fmt.Errorf("%w: chunk size %q", clientio.ErrMalformed, line)
		}
		if total += size; total > clientio.MaxBody && !discard {
			return body, fmt.Errorf("%w: chunked body over %d bytes", clientio.ErrTooLarge, clientio.MaxBody)
		}
		if size == 0 {
			for { // trailers up to the empty line
				line, err = br.ReadSlice('\n')
				if err != nil {
					return body, clientio.ReadErr(err)
				}
				if len(trimCRLF(line)) == 0 {
					return body, nil
				}
			}
		}
		if body, err = readN(br, body, int64(size), discard, cnt); err != nil {
			return body, err
		}
		line, err = br.ReadSlice('\n')
		if err != nil {
			return body, clientio.ReadErr(err)
		}
		if len(trimCRLF(line)) != 0 {
			return body, fmt.Errorf("%w: no CRLF after chunk", clientio.ErrMalformed)
		}
	}
}

func readToEOF(br *bufio.Reader, body []byte, discard bool, cnt *int) ([]byte, error) {
	for {
		if *cnt > clientio.MaxBody && !discard {
			return body, fmt.Errorf("%w: body over %d bytes", clientio.ErrTooLarge, clientio.MaxBody)
		}
		if discard {
			k, err := br.Discard(br.Buffered() + 1)
			*cnt += k
			if err == io.EOF {
				return body, nil
			}
			if err != nil {
				return body, err
			}
			continue
		}
		if cap(body)-len(body) < 4096 {
			nb := make([]byte, len(body), 2*cap(body)+4096)
			copy(nb, body)
			body = nb
		}
		k, err := br.Read(body[len(body):cap(body)])
		body = body[:len(body)+k]
		*cnt += k
		if err == io.EOF {
			return body, nil
		}
		if err != nil {
			return body, err
		}
	}
}

func trimCRLF(b []byte) []byte {
	b = bytes.TrimSuffix(b, []byte("\n"))
	return bytes.TrimSuffix(b, []byte("\r"))
}

func trim(b []byte) []byte {
	if len(b) > 40 {
		b = b[:40]
	}
	return trimCRLF(b)
}

// asciiEq compares b with the lower-case s, ignoring ASCII case.
func asciiEq(b []byte, s string) bool {
	if len(b) != len(s) {
		return false
	}
	for i := range len(b) {
		c := b[i]
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		if c != s[i] {
			return false
		}
	}
	return true
}

func asciiHasSuffixFold(b []byte, s string) bool {
	return len(b) >= len(s) && asciiEq(b[len(b)-len(s):], s)
}

func parseUint(b []byte) (int64, bool) {
	if len(b) == 0 || len(b) > 18 {
		return 0, false
	}
	var n int64
	for _, c := range b {
		if c < '0' || c > '9' {
			return 0, false
		}
		n = n*10 + int64(c-'0')
	}
	return n, true
}

func parseHex(b []byte) (int, bool) {
	if len(b) == 0 || len(b) > 7 { // 7 hex digits: chunks under 256 MiB
		return 0, false
	}
	n := 0
	for _, c := range b {
		switch {
		case '0' <= c && c <= '9':
			n = n<<4 | int(c-'0')
		case 'a' <= c && c <= 'f':
			n = n<<4 | int(c-'a'+10)
		case 'A' <= c && c <= 'F':
			n = n<<4 | int(c-'A'+10)
		default:
			return 0, false
		}
	}
	return n, true
}

// keepBody is the largest response buffer a connection keeps between
// requests; larger ones go back to bodies when the next request starts,
// so memory for bodies follows the responses being read, not the number
// of connections.
const keepBody = 16 << 10

// maxPooledBody is the largest buffer bodies keeps. A chunked body grows
// through every power of two up to its size, each step giving the last
// buffer back: pooled without a bound, one 64-MiB body left ~128 MiB in
// the pool (live until two GCs later). Larger bodies are rare in a
// benchmark and left to the GC.
const maxPooledBody = 4 << 20

// bodies[k] holds buffers of capacity exactly 1<<k, over keepBody and up
// to maxPooledBody.
var bodies [bits.UintSize]sync.Pool

// getBody returns an empty buffer of capacity n or more: over keepBody a
// power of two (so a body grown chunk by chunk is copied O(n) times in
// all), from bodies up to maxPooledBody.
func getBody(n int) []byte {
	if n <= keepBody {
		return make([]byte, 0, n)
	}
	k := bits.Len(uint(n - 1)) // 1<<k >= n
	if 1<<k > maxPooledBody {
		return make([]byte, 0, 1<<k)
	}
	if b, ok := bodies[k].Get().(*[]byte); ok {
		return (*b)[:0]
	}
	return make([]byte, 0, 1<<k)
}

// putBody gives a buffer from getBody back; others are left to the GC.
func putBody(b []byte) {
	c := cap(b)
	k := bits.Len(uint(c)) - 1
	if c <= keepBody || c > maxPooledBody || 1<<k != c {
		return
	}
	b = b[:0]
	bodies[k].Put(&b)
}
