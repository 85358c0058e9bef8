package fastapi

import (
	"bufio"
	"strings"
	"testing"

	"github.com/valyala/fasthttp"
)

// TestAcceptHeaders: the one-pass lookup finds what Peek (and
// ContentEncoding) finds, whatever
// the case the client wrote the names in, the first of repeated ones, and
// nothing when they are absent.
func TestAcceptHeaders(t *testing.T) {
	for _, hdrs := range []string{
		"",
		"Accept: application/cbor\r\n",
		"accept: application/cbor\r\nACCEPT-ENCODING: gzip\r\n",
		"Accept-Encoding: zstd, gzip;q=0.5\r\nAccept: text/plain\r\nAccept: application/json\r\n",
		"Accept-Encoding: br\r\naccept-encoding: gzip\r\nX-Accept: no\r\nAccept-Language: en\r\n",
		"Cookie: a=b\r\nUser-Agent: x\r\nContent-Type: application/json\r\nAccept: */*\r\n",
		"content-encoding: gzip\r\nContent-Encoding: zstd\r\nAccept-Encoding: zstd\r\n",
	} {
		var h fasthttp.RequestHeader
		raw := "GET /users/1 HTTP/1.1\r\nHost: x\r\n" + hdrs + "\r\n"
		if err := h.Read(bufio.NewReader(strings.NewReader(raw))); err != nil {
			t.Fatalf("%q: %v", hdrs, err)
		}
		a, ae, ce := acceptHeaders(&h)
		if want := string(h.Peek("Accept")); a != want {
			t.Errorf("%q: Accept %q, Peek says %q", hdrs, a, want)
		}
		if want := string(h.Peek("Accept-Encoding")); ae != want {
			t.Errorf("%q: Accept-Encoding %q, Peek says %q", hdrs, ae, want)
		}
		if want := string(h.ContentEncoding()); ce != want {
			t.Errorf("%q: Content-Encoding %q, ContentEncoding says %q", hdrs, ce, want)
		}
	}
}

// FuzzAcceptHeaders: for any header block fasthttp parses, the one-pass
// lookup agrees with Peek and ContentEncoding.
func FuzzAcceptHeaders(f *testing.F) {
	f.Add("accept: a\r\nAccept: b\r\nACCEPT-ENCODING: gzip\r\n")
	f.Add("Accept-Encoding: br\r\nX: y\r\n")
	f.Add("Content-Encoding: gzip\r\ncontent-encoding: zstd\r\n")
	f.Fuzz(func(t *testing.T, hdrs string) {
		var h fasthttp.RequestHeader
		if h.Read(bufio.NewReader(strings.NewReader("GET / HTTP/1.1\r\nHost: x\r\n"+hdrs+"\r\n"))) != nil {
			return
		}
		a, ae, ce := acceptHeaders(&h)
		if a != string(h.Peek("Accept")) || ae != string(h.Peek("Accept-Encoding")) || ce != string(h.ContentEncoding()) {
			t.Errorf("%q: (%q, %q, %q), Peek says (%q, %q, %q)", hdrs, a, ae, ce, h.Peek("Accept"), h.Peek("Accept-Encoding"), h.ContentEncoding())
		}
	})
}
