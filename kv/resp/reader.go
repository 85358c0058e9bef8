package resp

import (
	"bytes"
	"errors"
	"strconv"
)

// Limits of the request reader, Redis's defaults.
const (
	MaxArgs        = 1024 * 1024 // arguments of one command
	MaxBulk        = 512 << 20   // bytes of one argument (proto-max-bulk-len)
	MaxInline      = 64 << 10    // bytes of an inline command line
	MaxQueryBuffer = 1 << 30     // bytes buffered for one connection (client-query-buffer-limit)
)

// ErrProtocol is a malformed request; the connection is answered with the
// error and closed, as redis-server does.
//
//lint:ignore ST1005 redis-server's own wording ("ERR Protocol error: ...").
var ErrProtocol = errors.New("Protocol error")

type protoError string

func (e protoError) Error() string { return "ERR Protocol error: " + string(e) }
func (e protoError) Unwrap() error { return ErrProtocol }

// reqReader parses pipelined requests out of a buffer it fills from a
// connection. Arguments alias the buffer: they are valid until the next
// fill, so a command must be executed before more is read.
type reqReader struct {
	buf  []byte
	r, w int
	args [][]byte
}

// errQueryLimit is redis-server's reply to a command past MaxQueryBuffer.
const errQueryLimit = "-ERR Protocol error: query buffer limit reached\r\n"

// room makes space after rd.w for the next read: it drops what was parsed,
// keeps a partial command, and grows the buffer for a command larger than
// it, up to MaxQueryBuffer (false past it).
func (rd *reqReader) room() bool {
	if rd.r == rd.w {
		rd.r, rd.w = 0, 0
	}
	if rd.w < len(rd.buf) {
		return true
	}
	if rd.r > 0 { // keep the partial command, drop what is done
		rd.w = copy(rd.buf, rd.buf[rd.r:rd.w])
		rd.r = 0
		return true
	}
	if len(rd.buf) >= MaxQueryBuffer {
		return false
	}
	nb := make([]byte, min(2*len(rd.buf), MaxQueryBuffer))
	rd.w = copy(nb, rd.buf[:rd.w])
	rd.buf = nb
	return true
}

// next parses one command from the buffered bytes. It returns (nil, nil)
// when more bytes are needed, an empty non-nil slice for an empty command.
func (rd *reqReader) next() ([][]byte, error) {
	b := rd.buf[rd.r:rd.w]
	if len(b) == 0 {
		return nil, nil
	}
	if b[0] != '*' {
		return rd.inline(b)
	}
	nl := bytes.IndexByte(b, '\n')
	if nl < 0 {
		if len(b) > MaxInline {
			return nil, protoError("too big mbulk count string")
		}
		return nil, nil
	}
	n, ok := atoi(b[1:nl])
	if !ok || n > MaxArgs {
		return nil, protoError("invalid multibulk length")
	}
	pos := nl + 1
	args := rd.args[:0]
	for i := int64(0); i < n; i++ {
		if pos >= len(b) {
			return nil, nil
		}
		if b[pos] != '$' {
			return nil, protoError("expected '$', got '" + string(b[pos]) + "'")
		}
		nl := bytes.IndexByte(b[pos:], '\n')
		if nl < 0 {
			if len(b)-pos > MaxInline {
				return nil, protoError("too big bulk count string")
			}
			return nil, nil
		}
		l, ok := atoi(b[pos+1 : pos+nl])
		if !ok || l < 0 || l > MaxBulk {
			return nil, protoError("invalid bulk length")
		}
		start := pos + nl + 1
		end := start + int(l)
		if end+2 > len(b) {
			return nil, nil
		}
		args = append(args, b[start:end:end])
		pos = end + 2 // the CRLF after the data, skipped unchecked as Redis does
	}
	rd.args = args
	rd.r += pos
	if n <= 0 {
		return [][]byte{}, nil // empty command: skipped, not "need more"
	}
	return args, nil
}

// atoi parses a decimal line (a trailing \r is dropped), as
// strconv.ParseInt does. Plain digits that cannot overflow (every length
// and count a client sends) take a loop of their own: ParseInt was 5% of
// a pipelined GET's CPU.
func atoi(b []byte) (int64, bool) {
	if len(b) > 0 && b[len(b)-1] == '\r' {
		b = b[:len(b)-1]
	}
	if len(b) == 0 || len(b) > 20 {
		return 0, false
	}
	if len(b) <= 18 {
		var n int64
		for _, c := range b {
			if c < '0' || c > '9' {
				goto slow // a sign, or not a number
			}
			n = n*10 + int64(c-'0')
		}
		return n, true
	}
slow:
	n, err := strconv.ParseInt(string(b), 10, 64)
	return n, err == nil
}

// inline parses a telnet-style command line with Redis's quoting rules
// (sdssplitargs): spaces separate, "..." takes \n \t \xHH escapes, '...'
// only \'.
func (rd *reqReader) inline(b []byte) ([][]byte, error) {
	nl := bytes.IndexByte(b, '\n')
	if nl < 0 {
		if len(b) > MaxInline {
			return nil, protoError("too big inline request")
		}
		return nil, nil
	}
	line := b[:nl]
	if len(line) > 0 && line[len(line)-1] == '\r' {
		line = line[:len(line)-1]
	}
	args, ok := splitArgs(line, rd.args[:0])
	if !ok {
		return nil, protoError("unbalanced quotes in request")
	}
	rd.args = args
	rd.r += nl + 1
	return args, nil
}

func splitArgs(line []byte, args [][]byte) ([][]byte, bool) {
	i := 0
	for {
		for i < len(line) && (line[i] == ' ' || line[i] == '\t' || line[i] == '\n' || line[i] == '\r') {
			i++
		}
		if i >= len(line) {
			return args, true
		}
		var cur []byte
		switch line[i] {
		case '"':
			i++
			for {
				if i >= len(line) {
					return nil, false
				}
				c := line[i]
				if c == '\\' && i+3 < len(line) && line[i+1] == 'x' && isHex(line[i+2]) && isHex(line[i+3]) {
					cur = append(cur, unhex(line[i+2])<<4|unhex(line[i+3]))
					i += 4
					continue
				}
				if c == '\\' && i+1 < len(line) {
					i++
					switch line[i] {
					case 'n':
						c = '\n'
					case 'r':
						c = '\r'
					case 't':
						c = '\t'
					case 'b':
						c = '\b'
					case 'a':
						c = '\a'
					default:
						c = line[i]
					}
					cur = append(cur, c)
					i++
					continue
				}
				if c == '"' {
					i++
					if i < len(line) && line[i] != ' ' && line[i] != '\t' {
						return nil, false // closing quote must be followed by a space
					}
					break
				}
				cur = append(cur, c)
				i++
			}
		case '\'':
			i++
			for {
				if i >= len(line) {
					return nil, false
				}
				c := line[i]
				if c == '\\' && i+1 < len(line) && line[i+1] == '\'' {
					cur = append(cur, '\'')
					i += 2
					continue
				}
				if c == '\'' {
					i++
					if i < len(line) && line[i] != ' ' && line[i] != '\t' {
						return nil, false
					}
					break
				}
				cur = append(cur, c)
				i++
			}
		default:
			start := i
			for i < len(line) && line[i] != ' ' && line[i] != '\t' && line[i] != '"' && line[i] != '\'' {
				i++
			}
			cur = line[start:i:i]
		}
		if cur == nil {
			cur = []byte{}
		}
		args = append(args, cur)
	}
}

func isHex(c byte) bool {
	return ('0' <= c && c <= '9') || ('a' <= c && c <= 'f') || ('A' <= c && c <= 'F')
}

func unhex(c byte) byte {
	switch {
	case c >= 'a':
		return c - 'a' + 10
	case c >= 'A':
		return c - 'A' + 10
	}
	return c - '0'
}
