package kvhttp

import (
	"bytes"
	"io"
	"net/http"
	"net/url"
	"testing"

	"github.com/wirebench/wirebench/kv"
)

// nullWriter is a ResponseWriter that keeps nothing, so that the
// benchmarks count the handler's own work and allocations.
type nullWriter struct {
	h    http.Header
	code int
}

func (w *nullWriter) Header() http.Header         { return w.h }
func (w *nullWriter) WriteHeader(c int)           { w.code = c }
func (w *nullWriter) Write(b []byte) (int, error) { return len(b), nil }

// benchRaw runs the raw PUT or GET of one 128-byte value through Mount's
// handler, the request reused as net/http would parse it anew.
func benchRaw(b *testing.B, method string) {
	st, err := kv.Open(kv.Options{})
	if err != nil {
		b.Fatal(err)
	}
	defer st.Close()
	h := Mount(st, http.NotFoundHandler(), Options{MaxBody: 1 << 20})
	val := bytes.Repeat([]byte("v"), 128)
	st.Set("key:000000001234", val, kv.SetOpts{})
	u, _ := url.ParseRequestURI("/kv/key:000000001234")
	body := bytes.NewReader(val)
	r := &http.Request{Method: method, URL: u, Header: http.Header{}, RemoteAddr: "127.0.0.1:1", Body: io.NopCloser(body)}
	if method == http.MethodPut {
		r.Header.Set("Content-Type", mediaRaw)
		r.ContentLength = int64(len(val))
	} else {
		r.Header.Set("Accept", mediaRaw)
	}
	w := &nullWriter{}
	b.ReportAllocs()
	for b.Loop() {
		body.Reset(val)
		w.h = http.Header{}
		h.ServeHTTP(w, r)
		if w.code/100 != 2 {
			b.Fatalf("status %d", w.code)
		}
	}
}

func BenchmarkNetHTTPRawPut(b *testing.B) { benchRaw(b, http.MethodPut) }
func BenchmarkNetHTTPRawGet(b *testing.B) { benchRaw(b, http.MethodGet) }
