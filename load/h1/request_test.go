package h1

import (
	"bufio"
	"bytes"
	"net/http"
	"slices"
	"strings"
	"testing"
)

// TestAppendRequestUserHeaders: the request our own HTTP/1.1 engine
// writes carries one Host and at most one User-Agent, the user's where
// they gave one (curl's -H rule), and parses as what was asked for.
func TestAppendRequestUserHeaders(t *testing.T) {
	for _, tc := range []struct {
		name   string
		header []string
		host   string
		ua     []string // nil: none sent
	}{
		{"defaults", []string{"X-Run: a"}, "svc:8080", []string{"wirebench"}},
		{"the user's", []string{"user-agent: k6/1.0", "X-Run: a", "HOST: api.example"}, "api.example", []string{"k6/1.0"}},
		{"the last of two", []string{"User-Agent: a", "User-Agent: b", "X-Run: a"}, "svc:8080", []string{"b"}},
		{"empty User-Agent", []string{"User-Agent:", "X-Run: a"}, "svc:8080", nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			wire := AppendRequest(nil, "POST", "/users?x=1", "svc:8080", tc.header, []byte("{}"), true)
			req, err := http.ReadRequest(bufio.NewReader(bytes.NewReader(wire)))
			if err != nil {
				t.Fatalf("%v\n%s", err, wire)
			}
			if req.Host != tc.host || !slices.Equal(req.Header.Values("User-Agent"), tc.ua) ||
				req.Header.Get("X-Run") != "a" || req.ContentLength != 2 || req.RequestURI != "/users?x=1" {
				t.Errorf("host %q, User-Agent %q, X-Run %q, length %d, URI %q; want host %q, User-Agent %q\n%s",
					req.Host, req.Header.Values("User-Agent"), req.Header.Get("X-Run"), req.ContentLength, req.RequestURI, tc.host, tc.ua, wire)
			}
			if n := strings.Count(strings.ToLower(string(wire)), "\r\nhost:"); n != 1 {
				t.Errorf("%d Host lines\n%s", n, wire)
			}
		})
	}
}
