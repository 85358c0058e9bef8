// Package reqlog is wirebench's request log: what `load --record` sent
// and `serve --record` received, one request a line, so that
// `load --replay` can send it again at its recorded times. It imports no
// engine, so the server can write it.
//
// # Format
//
// UTF-8 text, one JSON object per line; the first line names the format.
//
//	{"wirebench":"requests/v1"}                                 header
//	{"t":1764259200000000000,"m":"GET","u":"/users/7","s":200}  a request
//	{"t":1764259200000213000,"m":"POST","u":"/echo",            (one line)
//	 "h":[["Content-Type","application/json"]],"b":"eyJhIjoxfQ==","s":200}
//	…
//
//	 field  meaning                                      required
//	 t      send (load) or arrival (serve) time, Unix ns  yes
//	 m      method                                        yes
//	 u      request target: /path?query or absolute URL  yes
//	 h      headers in order, [name, value] pairs         no
//	 b      body, standard base64                         no
//	 bt     the body was cut at MaxBody when recorded     no
//	 bl     the whole body's length, when b does not hold  no
//	        it all (cut, or kept out: no b)
//	 s      response status (0 or absent: unknown)        no
//
// A log keeps no secrets unless asked (Options): the values of secret
// headers and query parameters (IsSecret) read "REDACTED", and the
// bodies of the KV store and those over MaxKeptBody are kept out (bl
// says their length).
//
// Lines are written as requests end, so t is not strictly increasing
// (a slow request's line comes after a faster later one); replay reorders
// within a bounded window. A line longer than MaxLine, or one that does
// not parse, is counted as malformed and skipped by the Reader; a header
// line naming another version is an error.
package reqlog

import (
	"errors"
	"strings"
)

// Version is the header line's "wirebench" value.
const Version = "requests/v1"

// Limits of the format (docs/replay.md).
const (
	// MaxLine bounds one line of any log the replay readers read; a
	// longer line is malformed (its request is skipped, nothing else).
	MaxLine = 16 << 20
	// MaxBody bounds a recorded body: the recorder keeps the first
	// MaxBody bytes and marks the line "bt".
	MaxBody = 1 << 20
)

// ErrFormat is a log the reader cannot read at all (a wrong header);
// malformed lines are counted, not errors.
var ErrFormat = errors.New("reqlog: not a wirebench request log")

// Request is one recorded request, as every replay reader gives it.
type Request struct {
	// At is when it was sent or arrived, in ns from any fixed epoch
	// (Unix for our log, HAR and access logs): only differences count.
	At     int64
	Method string
	// Target is the request target: "/path?query" or an absolute URL.
	Target string
	Header [][2]string
	Body   []byte
	// Status is the recorded response status, 0 when unknown.
	Status int
	// Truncated: the recorder cut Body at MaxBody.
	Truncated bool
	// BodyLen is the whole body's length when Body does not hold it all
	// (cut, or kept out of the log: then Body is empty); 0 otherwise.
	BodyLen int64
}

// line is Request as a JSON line.
type line struct {
	T  int64       `json:"t"`
	M  string      `json:"m"`
	U  string      `json:"u"`
	H  [][2]string `json:"h,omitempty"`
	B  []byte      `json:"b,omitempty"`
	BT bool        `json:"bt,omitempty"`
	BL int64       `json:"bl,omitempty"`
	S  int         `json:"s,omitempty"`
}

// SplitAbsolute splits an absolute-form target (scheme://host/path?q)
// into its host (with any user information) and the rest, an
// origin-form target ("/" when the URL has no path). ok is false for
// any target that does not start with a scheme: "/login?next=https://…"
// is a path whose query holds a URL, not that URL.
func SplitAbsolute(target string) (host, rest string, ok bool) {
	i := strings.Index(target, "://")
	if i <= 0 || !isScheme(target[:i]) {
		return "", target, false
	}
	rest = target[i+3:]
	j := strings.IndexAny(rest, "/?#")
	if j < 0 {
		j = len(rest)
	}
	host, rest = rest[:j], rest[j:]
	if rest == "" || rest[0] != '/' {
		rest = "/" + rest
	}
	return host, rest, true
}

// isScheme: ALPHA *( ALPHA / DIGIT / "+" / "-" / "." ) (RFC 3986).
func isScheme(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i] | 0x20
		switch {
		case 'a' <= c && c <= 'z':
		case i > 0 && ('0' <= s[i] && s[i] <= '9' || s[i] == '+' || s[i] == '-' || s[i] == '.'):
		default:
			return false
		}
	}
	return s != ""
}
