package h1

import (
	"strconv"
	"strings"
)

// UserAgent is what every request of the load client says it is, unless
// the user's headers say otherwise (Defaults).
const UserAgent = "wirebench"

// Defaults returns the Host and User-Agent a request to host with the
// user's header lines goes with: a Host or User-Agent line of the user's
// replaces the default (the URL's host; UserAgent), as curl's -H does,
// and an empty User-Agent sends none. Each is sent once: a second line
// of the user's replaces the first.
func Defaults(host string, header []string) (h, ua string) {
	h, ua = host, UserAgent
	for _, line := range header {
		k, v, _ := CutHeader(line)
		switch {
		case isHeader(k, "host"):
			h = v
		case isHeader(k, "user-agent"):
			ua = v
		}
	}
	return h, ua
}

// Replaced reports whether a user's header line named k replaces a
// default (Defaults) rather than being sent as it is.
func Replaced(k string) bool { return isHeader(k, "host") || isHeader(k, "user-agent") }

// isHeader compares a header name with a lower-case one, without
// allocating.
func isHeader(k, lower string) bool { return len(k) == len(lower) && strings.EqualFold(k, lower) }

// AppendRequest serializes an HTTP/1.1 request. Content-Length is sent
// for any body, and for an empty one on methods that usually carry one.
// Host and User-Agent are Defaults'.
func AppendRequest(b []byte, method, uri, host string, header []string, body []byte, keepAlive bool) []byte {
	host, ua := Defaults(host, header)
	b = append(b, method...)
	b = append(b, ' ')
	b = append(b, uri...)
	b = append(b, " HTTP/1.1\r\nHost: "...)
	b = append(b, host...)
	b = append(b, "\r\n"...)
	if ua != "" {
		b = append(b, "User-Agent: "...)
		b = append(b, ua...)
		b = append(b, "\r\n"...)
	}
	for _, h := range header {
		k, v, _ := CutHeader(h)
		if Replaced(k) {
			continue
		}
		b = append(b, k...)
		b = append(b, ": "...)
		b = append(b, v...)
		b = append(b, "\r\n"...)
	}
	if len(body) > 0 || method == "POST" || method == "PUT" || method == "PATCH" {
		b = append(b, "Content-Length: "...)
		b = strconv.AppendInt(b, int64(len(body)), 10)
		b = append(b, "\r\n"...)
	}
	if !keepAlive {
		b = append(b, "Connection: close\r\n"...)
	}
	b = append(b, "\r\n"...)
	return append(b, body...)
}

// CutHeader splits "Key: Value".
func CutHeader(h string) (k, v string, ok bool) {
	k, v, ok = strings.Cut(h, ":")
	return strings.TrimSpace(k), strings.TrimSpace(v), ok
}
