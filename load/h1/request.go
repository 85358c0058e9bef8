package h1

import (
	"strconv"
	"strings"
)

// AppendRequest serializes an HTTP/1.1 request. Content-Length is sent
// for any body, and for an empty one on methods that usually carry one.
func AppendRequest(b []byte, method, uri, host string, header []string, body []byte, keepAlive bool) []byte {
	b = append(b, method...)
	b = append(b, ' ')
	b = append(b, uri...)
	b = append(b, " HTTP/1.1\r\nHost: "...)
	b = append(b, host...)
	b = append(b, "\r\nUser-Agent: wirebench\r\n"...)
	for _, h := range header {
		k, v, _ := CutHeader(h)
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
