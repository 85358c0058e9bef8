package httpapi_test

import (
	"bytes"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/klauspost/compress/gzip"
	"github.com/klauspost/compress/zstd"

	"github.com/wirebench/wirebench/httpapi"
	"github.com/wirebench/wirebench/store"
)

// echoBody is a valid echo request of exactly n bytes: JSON padded with
// trailing spaces, which the decoder skips.
func echoBody(t *testing.T, n int) []byte {
	t.Helper()
	b := []byte(`{"first_message":"at the ","second_message":"limit"}`)
	if n < len(b) {
		t.Fatalf("echo body of %d bytes is too small", n)
	}
	return append(b, bytes.Repeat([]byte{' '}, n-len(b))...)
}

// gzipWire gzips body and pads the gzip header's extra field so that the
// coded body is exactly wire bytes: the wire size moves, the decoded size
// does not.
func gzipWire(t *testing.T, body []byte, wire int) []byte {
	t.Helper()
	coded := func(extra []byte) []byte {
		var b bytes.Buffer
		zw := gzip.NewWriter(&b)
		zw.Extra = extra
		zw.Write(body)
		zw.Close()
		return b.Bytes()
	}
	base := len(coded([]byte{})) // an empty extra field costs its 2-byte length already
	if wire < base {
		t.Fatalf("gzip of %d bytes cannot be %d bytes on the wire", len(body), wire)
	}
	out := coded(make([]byte, wire-base))
	if len(out) != wire {
		t.Fatalf("gzip is %d bytes, want %d", len(out), wire)
	}
	return out
}

func zstdOf(t *testing.T, b []byte) []byte {
	t.Helper()
	enc, err := zstd.NewWriter(nil)
	if err != nil {
		t.Fatal(err)
	}
	defer enc.Close()
	return enc.EncodeAll(b, nil)
}

// post sends body to POST /echo of h, in process, and returns the status
// and the reply.
func post(h http.Handler, body []byte, coding string) (int, string) {
	r := httptest.NewRequest("POST", "/echo", bytes.NewReader(body))
	r.Header.Set("Content-Type", "application/json")
	if coding != "" {
		r.Header.Set("Content-Encoding", coding)
	}
	w := httptest.NewRecorder()
	h.ServeHTTP(w, r)
	return w.Code, w.Body.String()
}

func newAPI(t *testing.T, o httpapi.Options) http.Handler {
	t.Helper()
	h, err := httpapi.New(store.NewMemory(store.Options{}), o)
	if err != nil {
		t.Fatal(err)
	}
	return h
}

// TestBodyLimitExact: a body of exactly MaxBody bytes is served and one
// byte more is 413, on the wire (identity, and gzip whose header is padded
// while its content stays small) and decoded (gzip and zstd of a body
// whose coded size stays small).
func TestBodyLimitExact(t *testing.T) {
	const limit = 4096
	h := newAPI(t, httpapi.Options{MaxBody: limit})
	small := echoBody(t, 100)
	for _, tc := range []struct {
		name   string
		body   func(n int) []byte
		coding string
	}{
		{"identity", func(n int) []byte { return echoBody(t, n) }, ""},
		{"gzip wire", func(n int) []byte { return gzipWire(t, small, n) }, "gzip"},
		{"gzip decoded", func(n int) []byte { return gzipWire(t, echoBody(t, n), 200) }, "gzip"},
		{"zstd decoded", func(n int) []byte { return zstdOf(t, echoBody(t, n)) }, "zstd"},
	} {
		if code, reply := post(h, tc.body(limit), tc.coding); code != http.StatusOK {
			t.Errorf("%s: %d bytes: %d %s, want 200", tc.name, limit, code, reply)
		}
		code, reply := post(h, tc.body(limit+1), tc.coding)
		if code != http.StatusRequestEntityTooLarge || !strings.Contains(reply, "exceeds 4096 bytes") || !strings.Contains(reply, `"too_large"`) {
			t.Errorf("%s: %d bytes: %d %s, want 413 naming the limit", tc.name, limit+1, code, reply)
		}
	}
}

// TestDefaultBodyLimitIs8MiB pins the default with a literal: 8,388,608
// bytes are served, 8,388,609 are not.
func TestDefaultBodyLimitIs8MiB(t *testing.T) {
	h := newAPI(t, httpapi.Options{})
	if code, reply := post(h, echoBody(t, 8388608), ""); code != http.StatusOK {
		t.Errorf("8 MiB body: %d %.200s", code, reply)
	}
	if code, reply := post(h, echoBody(t, 8388609), ""); code != http.StatusRequestEntityTooLarge || !strings.Contains(reply, "8388608") {
		t.Errorf("8 MiB + 1 body: %d %.200s", code, reply)
	}
	// A gzip bomb: 9 MiB of spaces in 9 KiB on the wire.
	if code, reply := post(h, gzipWire(t, echoBody(t, 9<<20), 20000), "gzip"); code != http.StatusRequestEntityTooLarge {
		t.Errorf("9 MiB decoded from 20 kB: %d %.200s", code, reply)
	}
}
