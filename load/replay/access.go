package replay

import (
	"bytes"
	"fmt"
	"io"
	"math"
	"strconv"
	"time"

	"github.com/wirebench/wirebench/load/replay/reqlog"
)

// MaxSameSecond bounds how many lines of one second a second-resolution
// access log holds to spread them evenly within that second; the next
// lines of the same second start a new group, spread over the same
// second (their order then differs from the file's, and the schedule's
// reorder window puts them back in time order).
const MaxSameSecond = 100_000

// accessReader reads nginx/Apache "combined" access logs:
//
//	host ident user [10/Oct/2000:13:55:36 -0700] "GET /a?b HTTP/1.1" status bytes "referer" "agent" [extra…]
//
// Extra fields after the agent, when numeric, are read as nginx's
// $msec (Unix seconds with milliseconds, > 1e9) and $request_time
// (seconds, < 1e6). A log line is written when a request ends, so the
// request started at ($msec or the [time]) − $request_time. Without $msec
// the times have whole seconds: the requests of one second are spread
// evenly within it, the k-th of n at (k+½)/n s.
type accessReader struct {
	lines   *reqlog.Lines
	bad     reqlog.Malformed
	group   []held           // one second's requests, waiting to be spread
	groupAt int64            // that second, in ns
	out     []reqlog.Request // spread, to hand out
	eof     bool
}

// held is a request of a second-resolution log and its request time.
type held struct {
	req reqlog.Request
	rt  int64
}

func newAccessReader(r io.Reader) *accessReader {
	a := &accessReader{}
	a.lines = reqlog.NewLines(r, &a.bad)
	return a
}

func (a *accessReader) Malformed() *reqlog.Malformed { return &a.bad }

func (a *accessReader) Next() (reqlog.Request, error) {
	for len(a.out) == 0 {
		if a.eof {
			return reqlog.Request{}, io.EOF
		}
		b, err := a.lines.Next()
		if err == io.EOF {
			a.eof = true
			a.flush()
			continue
		}
		if err != nil {
			return reqlog.Request{}, err
		}
		req, sec, rt, why := parseAccess(b)
		if why != "" {
			a.bad.Add(a.lines.No, why)
			continue
		}
		if sec == 0 { // sub-second time: no spreading
			a.flush()
			a.out = append(a.out, req)
			continue
		}
		if len(a.group) > 0 && (sec != a.groupAt || len(a.group) >= MaxSameSecond) {
			a.flush()
		}
		a.groupAt = sec
		a.group = append(a.group, held{req, rt})
	}
	r := a.out[0]
	a.out = a.out[1:]
	return r, nil
}

// flush spreads the held second's requests evenly within it, each then
// moved back by its request time (the line was logged at its end).
func (a *accessReader) flush() {
	n := int64(len(a.group))
	for k, h := range a.group {
		h.req.At = a.groupAt + (2*int64(k)+1)*int64(time.Second)/(2*n) - h.rt
		a.out = append(a.out, h.req)
	}
	a.group = a.group[:0]
}

// parseAccess parses one combined-log line. With a sub-second $msec,
// req.At is the start; else sec is the logged second (ns) and rt the
// request time, for flush to spread.
func parseAccess(b []byte) (req reqlog.Request, sec, rt int64, why string) {
	// host ident user
	rest := b
	for i := 0; i < 3; i++ {
		sp := bytes.IndexByte(rest, ' ')
		if sp < 0 {
			return req, 0, 0, "not a combined log line (want host ident user [time] \"request\" status bytes)"
		}
		rest = rest[sp+1:]
	}
	if len(rest) == 0 || rest[0] != '[' {
		return req, 0, 0, "no [time]"
	}
	end := bytes.IndexByte(rest, ']')
	if end < 0 {
		return req, 0, 0, "no ] after the time"
	}
	t, err := time.Parse("02/Jan/2006:15:04:05 -0700", string(rest[1:end]))
	if _, inRange := unixNano(t); err != nil || !inRange {
		return req, 0, 0, fmt.Sprintf("bad time %q", shorten(rest[1:end]))
	}
	rest = bytes.TrimLeft(rest[end+1:], " ")
	reqLine, rest, ok := quoted(rest)
	if !ok {
		return req, 0, 0, "no quoted request"
	}
	f := bytes.Fields(reqLine)
	if len(f) != 3 || !bytes.HasPrefix(f[2], []byte("HTTP/")) || !reqlog.ValidMethod(string(f[0])) || !reqlog.ValidTarget(string(f[1])) {
		return req, 0, 0, fmt.Sprintf("bad request %q", shorten(reqLine))
	}
	req.Method, req.Target = string(f[0]), string(f[1])
	fields := bytes.Fields(rest)
	if len(fields) < 2 {
		return req, 0, 0, "no status and size"
	}
	st, err := strconv.Atoi(string(fields[0]))
	if err != nil || st < 100 || st > 999 {
		return req, 0, 0, fmt.Sprintf("bad status %q", shorten(fields[0]))
	}
	req.Status = st
	// Skip the quoted referer and agent; numbers after them are extras.
	rest = bytes.TrimLeft(rest, " ")
	rest = rest[bytes.IndexByte(rest, ' ')+1:] // past status
	if sp := bytes.IndexByte(rest, ' '); sp >= 0 {
		rest = rest[sp+1:] // past bytes
	} else {
		rest = nil
	}
	for i := 0; i < 2; i++ {
		rest = bytes.TrimLeft(rest, " ")
		if len(rest) > 0 && rest[0] == '"' {
			if _, rest, ok = quoted(rest); !ok {
				return req, 0, 0, "unterminated quoted field"
			}
		}
	}
	var msec, reqTime float64
	for _, x := range bytes.Fields(rest) {
		v, err := strconv.ParseFloat(string(bytes.Trim(x, `"`)), 64)
		switch {
		case err != nil || v < 0:
		case v > 1e9 && v < 1e11:
			msec = v
		case v < 1e6:
			reqTime = v
		}
	}
	rtNs := int64(reqTime * 1e9)
	if msec > 0 {
		req.At = int64(math.Round(msec*1e3))*int64(time.Millisecond) - rtNs
		return req, 0, 0, ""
	}
	return req, t.UnixNano(), rtNs, ""
}

// quoted cuts a "…" field (with \" escapes) off the front of b.
func quoted(b []byte) (field, rest []byte, ok bool) {
	if len(b) == 0 || b[0] != '"' {
		return nil, b, false
	}
	for i := 1; i < len(b); i++ {
		switch b[i] {
		case '\\':
			i++
		case '"':
			return b[1:i], b[i+1:], true
		}
	}
	return nil, b, false
}

func shorten(b []byte) string {
	if len(b) > 60 {
		return string(b[:57]) + "..."
	}
	return string(b)
}
