package reqlog

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"
)

// Reader streams a request log: one line in memory at a time.
// Not safe for concurrent use.
type Reader struct {
	lines  *Lines
	Bad    Malformed
	header bool
}

// NewReader reads the log in r.
func NewReader(r io.Reader) *Reader {
	rd := &Reader{}
	rd.lines = NewLines(r, &rd.Bad)
	return rd
}

// Next returns the next well-formed request, or io.EOF. A malformed line
// is counted in Bad and skipped; only a read error or a header naming
// another format is an error.
func (r *Reader) Next() (Request, error) {
	for {
		b, err := r.lines.Next()
		if err != nil {
			return Request{}, err
		}
		if !r.header {
			r.header = true
			var h struct {
				V *string `json:"wirebench"`
			}
			if json.Unmarshal(b, &h) == nil && h.V != nil {
				if *h.V != Version {
					return Request{}, fmt.Errorf("%w: line 1 names %q, want %q", ErrFormat, *h.V, Version)
				}
				continue
			}
			// No header: read on (a log cut from the middle of another).
		}
		req, why := parseLine(b)
		if why != "" {
			r.Bad.Add(r.lines.No, why)
			continue
		}
		return req, nil
	}
}

// ReadAll reads a whole log into memory (a small one: tests, tools; replay
// streams with Next): every request, or an error at a read error or the
// first malformed line, which a log we wrote never holds.
func ReadAll(r io.Reader) ([]Request, error) {
	rd := NewReader(r)
	var out []Request
	for {
		q, err := rd.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return out, err
		}
		out = append(out, q)
	}
	if rd.Bad.N != 0 {
		return out, fmt.Errorf("reqlog: %d malformed lines: %v", rd.Bad.N, rd.Bad.Examples)
	}
	return out, nil
}

// parseLine decodes one request line; why says what is wrong with it.
func parseLine(b []byte) (Request, string) {
	var l line
	if err := json.Unmarshal(b, &l); err != nil {
		return Request{}, "not a JSON request line: " + shorten(err.Error())
	}
	switch {
	case l.T == 0:
		return Request{}, "no time (t)"
	case !validMethod(l.M):
		return Request{}, fmt.Sprintf("bad method %q", shorten(l.M))
	case l.U == "":
		return Request{}, "no target (u)"
	case !ValidTarget(l.U):
		return Request{}, fmt.Sprintf("bad target %q", shorten(l.U))
	case l.S < 0 || l.S > 999:
		return Request{}, fmt.Sprintf("bad status %d", l.S)
	case l.BL < 0:
		return Request{}, fmt.Sprintf("bad body length %d", l.BL)
	}
	for _, h := range l.H {
		if !ValidHeader(h[0], h[1]) {
			return Request{}, fmt.Sprintf("bad header %q", shorten(h[0]))
		}
	}
	return Request{At: l.T, Method: l.M, Target: l.U, Header: l.H, Body: l.B, Status: l.S, Truncated: l.BT, BodyLen: l.BL}, ""
}

// validMethod: an HTTP token (RFC 9110), short.
func validMethod(m string) bool { return m != "" && len(m) <= 32 && isToken(m) }

func validHeaderName(k string) bool { return k != "" && len(k) <= 256 && isToken(k) }

// ValidMethod and ValidHeader tell the replay readers what may go on the
// wire as recorded: a token method, a token name and a value without CR
// or LF (a value that could split the request is refused, not sent).
func ValidMethod(m string) bool { return validMethod(m) }

// ValidHeader: see ValidMethod. A value holds no control byte but HTAB
// (RFC 9110 5.5): an ESC or NUL is refused, never sent or shown.
func ValidHeader(k, v string) bool {
	if !validHeaderName(k) {
		return false
	}
	for i := 0; i < len(v); i++ {
		if c := v[i]; c < ' ' && c != '\t' || c == 0x7f {
			return false
		}
	}
	return true
}

// ValidTarget: a request target (path and query, or an absolute URL) of
// visible bytes: no space and no control byte (ESC, NUL, DEL), which
// would split the request line or reach a terminal or a report.
func ValidTarget(t string) bool {
	if t == "" {
		return false
	}
	for i := 0; i < len(t); i++ {
		if c := t[i]; c <= ' ' || c == 0x7f {
			return false
		}
	}
	return true
}

func isToken(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c <= ' ' || c >= 0x7f || strings.IndexByte("\"(),/:;<=>?@[\\]{}", c) >= 0 {
			return false
		}
	}
	return true
}

// shorten keeps an example short enough for a summary line.
func shorten(s string) string {
	if len(s) > 80 {
		return s[:77] + "..."
	}
	return s
}
