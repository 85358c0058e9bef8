package httpapi

import (
	"bytes"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/wirebench/wirebench/store"
)

// headerWriter keeps a copy of the handler's header map as it was at
// WriteHeader (sent), as net/http does, and the map itself (h).
type headerWriter struct {
	h, sent http.Header
	body    bytes.Buffer
}

func (w *headerWriter) Header() http.Header         { return w.h }
func (w *headerWriter) WriteHeader(int)             { w.sent = w.h.Clone() }
func (w *headerWriter) Write(p []byte) (int, error) { return w.body.Write(p) }

func serveRaw(t *testing.T, s *Server, method, path, body string, hdr ...string) *headerWriter {
	t.Helper()
	r := &http.Request{Method: method, URL: &url.URL{Path: path}, Header: http.Header{}, Body: http.NoBody}
	if body != "" {
		r.Body, r.ContentLength = nopBody{strings.NewReader(body)}, int64(len(body))
		r.Header["Content-Type"] = []string{"application/json"}
	}
	for i := 0; i+1 < len(hdr); i += 2 {
		r.Header[hdr[i]] = []string{hdr[i+1]}
	}
	w := &headerWriter{h: http.Header{}}
	s.ServeHTTP(w, r)
	return w
}

type nopBody struct{ *strings.Reader }

func (nopBody) Close() error { return nil }

// TestNetHTTPHeaders: the net/http adapter leaves Content-Length to
// net/http for bodies that fit its 2048-byte buffer and sets it beyond
// (where net/http would chunk), and sets the shared header values, not
// copies of them.
func TestNetHTTPHeaders(t *testing.T) {
	st := store.NewMemory(store.Options{})
	if err := st.Seed(1, 0); err != nil {
		t.Fatal(err)
	}
	s, err := New(st, Options{})
	if err != nil {
		t.Fatal(err)
	}
	// {"message":"..."} is 14 bytes around the message.
	for _, n := range []int{20, chunkingThreshold - 1, chunkingThreshold, chunkingThreshold + 1, 3 * chunkingThreshold} {
		w := serveRaw(t, s, "POST", "/echo", `{"first_message":"`+strings.Repeat("a", n-14)+`"}`)
		if w.body.Len() != n {
			t.Fatalf("echo body of %d bytes, want %d", w.body.Len(), n)
		}
		cl, set := w.sent["Content-Length"]
		if want := n > chunkingThreshold; set != want {
			t.Errorf("%d-byte body: Content-Length set %v (%q), want %v", n, set, cl, want)
		}
		if set && (len(cl) != 1 || cl[0] != strconv.Itoa(n)) {
			t.Errorf("%d-byte body: Content-Length %q", n, cl)
		}
	}
	shared := func(name string, got, want []string) {
		t.Helper()
		if len(got) != 1 || len(want) != 1 || &got[0] != &want[0] {
			t.Errorf("%s: %q is not the shared value %q", name, got, want)
		}
	}
	w := serveRaw(t, s, "GET", "/users/1", "")
	shared("Vary", w.h["Vary"], varyValues)
	shared("Content-Type", w.h["Content-Type"], s.contentTypes["application/json"])
	for _, c := range []string{codingGzip, codingZstd} {
		w := serveRaw(t, s, "GET", "/users", "", "Accept-Encoding", c)
		shared("Content-Encoding "+c, w.h["Content-Encoding"], codingValues[c])
	}
	if w := serveRaw(t, s, "GET", "/users/1", ""); w.sent["Content-Encoding"] != nil {
		t.Errorf("identity reply has Content-Encoding %q", w.sent["Content-Encoding"])
	}
	shared("health Content-Type", serveRaw(t, s, "GET", "/healthz", "").h["Content-Type"], s.contentTypes[textPlain])
	if ct := serveRaw(t, s, "GET", "/metrics", "").sent["Content-Type"]; len(ct) != 1 || !strings.HasPrefix(ct[0], "text/plain; version=") {
		t.Errorf("/metrics Content-Type %q (not in the shared table: set as is)", ct)
	}
}

// TestDateHeader: every reply of the net/http adapter carries the Date
// net/http would have written (http.TimeFormat, the reply's second), one
// formatted value shared within a second and a new one the next second.
func TestDateHeader(t *testing.T) {
	t0 := time.Date(2026, 11, 23, 21, 59, 59, 900e6, time.FixedZone("CET", 3600))
	a, b := dateHeader(t0), dateHeader(t0.Add(50*time.Millisecond))
	if len(a) != 1 || a[0] != "Mon, 23 Nov 2026 20:59:59 GMT" {
		t.Fatalf("Date %q, want Mon, 23 Nov 2026 20:59:59 GMT", a)
	}
	if &a[0] != &b[0] {
		t.Errorf("Date formatted twice within one second")
	}
	if c := dateHeader(t0.Add(150 * time.Millisecond)); c[0] != "Mon, 23 Nov 2026 21:00:00 GMT" {
		t.Errorf("next second's Date %q", c)
	}

	st := store.NewMemory(store.Options{})
	if err := st.Seed(1, 0); err != nil {
		t.Fatal(err)
	}
	s, err := New(st, Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, path := range []string{"/users/1", "/nope", "/healthz"} {
		before := time.Now().Truncate(time.Second)
		d := serveRaw(t, s, "GET", path, "").sent["Date"]
		after := time.Now()
		if len(d) != 1 {
			t.Fatalf("GET %s: Date %q", path, d)
		}
		got, err := http.ParseTime(d[0])
		if err != nil || got.Before(before) || got.After(after) || d[0] != got.UTC().Format(http.TimeFormat) {
			t.Errorf("GET %s: Date %q (%v), want the reply's second in http.TimeFormat", path, d[0], err)
		}
	}
}
