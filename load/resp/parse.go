package resp

import (
	"bufio"
	"errors"
	"fmt"
	"slices"

	"github.com/wirebench/wirebench/load/clientio"
)

// RESP reply limits (README: limits). A reply over them fails with
// ErrTooLarge, so no peer can make the client grow without bound.
const (
	// maxRESPLine bounds a simple string, error or integer line, and a
	// length header (Redis's own inline limit is 64 KiB).
	maxRESPLine = 64 << 10
	// maxRESPBulk bounds a bulk string the client keeps (to check it):
	// the same 64 MiB as an HTTP body.
	maxRESPBulk = clientio.MaxBody
	// maxRESPElems bounds the elements of one array, nested ones counted
	// too, so that "*2147483647" cannot make the client loop or allocate.
	maxRESPElems = 1 << 20
	// maxRESPDepth bounds array nesting.
	maxRESPDepth = 32
)

// Reply is one parsed RESP2 reply. Bulk aliases a buffer reused by
// the next parse; arrays are read through (elements checked for syntax
// and limits, not kept): the KV scenarios never ask for one.
type Reply struct {
	Kind byte   // '+', '-', ':', '$', '*'
	Nil  bool   // $-1 or *-1
	Int  int64  // ':' value, or the element count of '*'
	Bulk []byte // '$' payload, or the text of '+' and '-'
}

// errProto marks a reply that is not RESP2 (wrapped in ErrMalformed,
// so failures count as "malformed response" whatever the protocol).
var errProto = errors.New("not a RESP2 reply")

// Parse reads one reply from br into r, keeping a bulk string in buf
// (grown as needed), and returns buf for reuse. It is deliberately
// minimal — what a load client needs to stay in sync and check GET's
// value — and fuzzed (FuzzParseRESP).
func Parse(br *bufio.Reader, r *Reply, buf []byte) ([]byte, error) {
	*r = Reply{}
	elems := 0
	return parseValue(br, r, buf, 0, &elems)
}

func parseValue(br *bufio.Reader, r *Reply, buf []byte, depth int, elems *int) ([]byte, error) {
	line, err := readLine(br)
	if err != nil {
		return buf, err
	}
	r.Kind = line[0]
	body := line[1:]
	switch r.Kind {
	case '+', '-':
		r.Bulk = append(buf[:0], body...)
		return r.Bulk, nil
	case ':':
		if r.Int, err = parseInt(body); err != nil {
			return buf, err
		}
		return buf, nil
	case '$':
		n, err := parseInt(body)
		if err != nil {
			return buf, err
		}
		if n == -1 {
			r.Nil = true
			return buf, nil
		}
		if n < 0 {
			return buf, fmt.Errorf("%w: %w: bulk length %d", clientio.ErrMalformed, errProto, n)
		}
		if n > maxRESPBulk {
			return buf, fmt.Errorf("%w: bulk string of %d bytes (limit %d)", clientio.ErrTooLarge, n, maxRESPBulk)
		}
		// Grown as the value arrives, a MiB at a time: a peer announcing
		// 64 MiB and sending nothing costs no 64 MiB allocation.
		need := int(n) + 2
		buf = buf[:0]
		for len(buf) < need {
			chunk := min(need-len(buf), 1<<20)
			buf = slices.Grow(buf, chunk)[:len(buf)+chunk]
			if _, err := ioReadFull(br, buf[len(buf)-chunk:]); err != nil {
				return buf[:0], err
			}
		}
		if buf[n] != '\r' || buf[n+1] != '\n' {
			return buf[:0], fmt.Errorf("%w: %w: bulk string not ended by CRLF", clientio.ErrMalformed, errProto)
		}
		r.Bulk = buf[:n]
		return buf, nil
	case '*':
		n, err := parseInt(body)
		if err != nil {
			return buf, err
		}
		r.Int = n
		if n == -1 {
			r.Nil = true
			return buf, nil
		}
		if n < 0 {
			return buf, fmt.Errorf("%w: %w: array length %d", clientio.ErrMalformed, errProto, n)
		}
		if depth >= maxRESPDepth {
			return buf, fmt.Errorf("%w: arrays nested deeper than %d", clientio.ErrTooLarge, maxRESPDepth)
		}
		if *elems += int(min(n, maxRESPElems+1)); *elems > maxRESPElems {
			return buf, fmt.Errorf("%w: more than %d array elements", clientio.ErrTooLarge, maxRESPElems)
		}
		var el Reply
		for range n {
			if buf, err = parseValue(br, &el, buf, depth+1, elems); err != nil {
				return buf, err
			}
		}
		r.Bulk = nil
		return buf, nil
	}
	return buf, fmt.Errorf("%w: %w: type byte %q", clientio.ErrMalformed, errProto, r.Kind)
}

// readLine reads one CRLF-terminated line without its CRLF; the slice is
// valid until the next read.
func readLine(br *bufio.Reader) ([]byte, error) {
	line, err := br.ReadSlice('\n')
	if errors.Is(err, bufio.ErrBufferFull) {
		// A line longer than the reader's buffer: accumulate up to the limit.
		acc := append([]byte(nil), line...)
		for errors.Is(err, bufio.ErrBufferFull) {
			if len(acc) > maxRESPLine {
				return nil, fmt.Errorf("%w: RESP line over %d bytes", clientio.ErrTooLarge, maxRESPLine)
			}
			line, err = br.ReadSlice('\n')
			acc = append(acc, line...)
		}
		line = acc
	}
	if err != nil {
		return nil, clientio.ReadErr(err)
	}
	if len(line) > maxRESPLine+2 {
		return nil, fmt.Errorf("%w: RESP line over %d bytes", clientio.ErrTooLarge, maxRESPLine)
	}
	if len(line) < 3 || line[len(line)-2] != '\r' {
		return nil, fmt.Errorf("%w: %w: line not ended by CRLF", clientio.ErrMalformed, errProto)
	}
	return line[:len(line)-2], nil
}

// parseInt reads a RESP integer: an optional '-' and 1..19 digits.
func parseInt(b []byte) (int64, error) {
	neg := len(b) > 0 && b[0] == '-'
	if neg {
		b = b[1:]
	}
	if len(b) == 0 || len(b) > 18 {
		return 0, fmt.Errorf("%w: %w: bad integer %q", clientio.ErrMalformed, errProto, b)
	}
	var n int64
	for _, c := range b {
		if c < '0' || c > '9' {
			return 0, fmt.Errorf("%w: %w: bad integer %q", clientio.ErrMalformed, errProto, b)
		}
		n = n*10 + int64(c-'0')
	}
	if neg {
		n = -n
	}
	return n, nil
}

// ioReadFull is io.ReadFull with the end of the connection inside the
// value reported as errClosedDuring.
func ioReadFull(br *bufio.Reader, p []byte) (int, error) {
	n := 0
	for n < len(p) {
		k, err := br.Read(p[n:])
		n += k
		if err != nil {
			if n < len(p) {
				return n, clientio.ReadErr(err)
			}
			break
		}
	}
	return n, nil
}

// AppendCommand appends args as a RESP array of bulk strings, the form
// redis-benchmark and every client library send.
func AppendCommand(b []byte, args ...[]byte) []byte {
	b = append(b, '*')
	b = appendUint(b, len(args))
	b = append(b, '\r', '\n')
	for _, a := range args {
		b = append(b, '$')
		b = appendUint(b, len(a))
		b = append(b, '\r', '\n')
		b = append(b, a...)
		b = append(b, '\r', '\n')
	}
	return b
}

func appendUint(b []byte, n int) []byte {
	var tmp [20]byte
	i := len(tmp)
	for {
		i--
		tmp[i] = byte('0' + n%10)
		n /= 10
		if n == 0 {
			break
		}
	}
	return append(b, tmp[i:]...)
}
