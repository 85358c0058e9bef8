package httpapi_test

import (
	"bytes"
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/wirebench/wirebench/bench/servercpu"
	"github.com/wirebench/wirebench/httpapi"
	"github.com/wirebench/wirebench/internal/race"
	"github.com/wirebench/wirebench/store"
)

// sinkWriter is the least a ResponseWriter can do: a fresh header map per
// request (as net/http allocates one) and a body that is counted, so the
// benchmarks below measure the adapter and the core, not a recorder.
type sinkWriter struct {
	h      http.Header
	status int
	n      int
}

func (w *sinkWriter) Header() http.Header         { return w.h }
func (w *sinkWriter) WriteHeader(status int)      { w.status = status }
func (w *sinkWriter) Write(p []byte) (int, error) { w.n += len(p); return len(p), nil }

func benchServer(b *testing.B) *httpapi.Server {
	st := store.NewMemory(store.Options{})
	if err := st.Seed(100, 0); err != nil {
		b.Fatal(err)
	}
	h, err := httpapi.New(st, httpapi.Options{})
	if err != nil {
		b.Fatal(err)
	}
	return h
}

// BenchmarkServeHTTP is the net/http adapter and the core on the REST hot
// path (issue 17): GET one user, the 100-user list, a create and an echo, in JSON
// as wrk and our load client send them. Compare runs with benchstat
// (-count 6); allocs/op is the number to keep down.
func BenchmarkServeHTTP(b *testing.B) {
	body := []byte(`{"name":"Ada Lovelace","email":"ada@example.com"}`)
	for _, c := range []struct {
		name, method, path string
		body               []byte
		want               int
	}{
		{"get", "GET", "/users/1", nil, http.StatusOK},
		{"list", "GET", "/users", nil, http.StatusOK},
		{"create", "POST", "/users", body, http.StatusCreated},
		{"echo", "POST", "/echo", []byte(`{"first_message":"hello, ","second_message":"world"}`), http.StatusOK},
	} {
		b.Run(c.name, func(b *testing.B) {
			h := benchServer(b)
			u := &url.URL{Path: c.path}
			rd := bytes.NewReader(nil)
			r := &http.Request{Method: c.method, URL: u, Header: http.Header{}, Body: io.NopCloser(rd), ContentLength: int64(len(c.body))}
			if c.body != nil {
				r.Header.Set("Content-Type", "application/json")
			}
			w := &sinkWriter{}
			b.ReportAllocs()
			for b.Loop() {
				rd.Reset(c.body)
				w.h, w.status = http.Header{}, 0
				h.ServeHTTP(w, r)
				if w.status != c.want {
					b.Fatalf("status %d, want %d", w.status, c.want)
				}
			}
		})
	}
}

// BenchmarkBareGet is BenchmarkServeHTTP/get's yardstick: the bare
// handler of issue 17 (bench/servercpu) answering GET /users/1 from the
// same 100 users, on the same sinkWriter. The difference in ns/op is what
// the adapter and the core (routing, negotiation, metrics, limits, the
// pooled state, encoding/json.Marshal's copy against Encoder.Encode) add
// to a request before net/http's own work and the syscalls.
func BenchmarkBareGet(b *testing.B) {
	st := store.NewMemory(store.Options{})
	if err := st.Seed(100, 0); err != nil {
		b.Fatal(err)
	}
	h := servercpu.BareHandler(st.ListUsers())
	r, err := http.NewRequest("GET", "/users/1", nil)
	if err != nil {
		b.Fatal(err)
	}
	w := &sinkWriter{}
	b.ReportAllocs()
	for b.Loop() {
		w.h, w.status = http.Header{}, 0
		h.ServeHTTP(w, r)
		if w.status != 0 && w.status != http.StatusOK || w.n == 0 {
			b.Fatalf("status %d, %d bytes", w.status, w.n)
		}
	}
}

// TestServeHTTPAllocations bounds the net/http adapter's allocations in
// JSON (issue 17). GET /users/1 measured 3: the response header map
// net/http makes per request (made here per run) and its storage on the
// first header set (the bare handler pays both too), and time.Time's
// MarshalJSON; header values are shared, the core's request state and
// Response stay off the heap. POST /echo measured 10: those two maps,
// MaxBytesReader, encoding/json's decoder state and its two strings, the
// echoed concatenation. AllocsPerRun truncates the mean, so a GC emptying
// the pools once during the runs adds nothing.
func TestServeHTTPAllocations(t *testing.T) {
	if race.Enabled {
		t.Skip("the race detector drops pooled objects on purpose: allocation counts mean nothing")
	}
	st := store.NewMemory(store.Options{})
	if err := st.Seed(1, 0); err != nil {
		t.Fatal(err)
	}
	h, err := httpapi.New(st, httpapi.Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		method, path string
		body         string
		max          float64
	}{
		{"GET", "/users/1", "", 3},
		{"POST", "/echo", `{"first_message":"hello, ","second_message":"world"}`, 10},
	} {
		rd := strings.NewReader("")
		r := &http.Request{Method: c.method, URL: &url.URL{Path: c.path}, Header: http.Header{}, Body: io.NopCloser(rd), ContentLength: int64(len(c.body))}
		if c.body != "" {
			r.Header["Content-Type"] = []string{"application/json"}
		}
		w := &sinkWriter{}
		allocs := testing.AllocsPerRun(200, func() {
			rd.Reset(c.body)
			w.h, w.status = http.Header{}, 0
			h.ServeHTTP(w, r)
		})
		if w.status != http.StatusOK || w.n == 0 {
			t.Fatalf("%s %s: %d, %d bytes", c.method, c.path, w.status, w.n)
		}
		if allocs > c.max {
			t.Errorf("%.0f allocations per %s %s, want <= %.0f", allocs, c.method, c.path, c.max)
		}
	}
}
