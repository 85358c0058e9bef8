package streamapi_test

import (
	"bytes"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/wirebench/wirebench/httpapi"
	"github.com/wirebench/wirebench/store"
	"github.com/wirebench/wirebench/streamapi"
)

// sink is a ResponseWriter that counts the body: the benchmarks measure
// the server's own work, no socket.
type sink struct {
	h http.Header
	n int
}

func (s *sink) Header() http.Header         { return s.h }
func (s *sink) WriteHeader(int)             {}
func (s *sink) Flush()                      {}
func (s *sink) Write(p []byte) (int, error) { s.n += len(p); return len(p), nil }

// BenchmarkList1000 is the server's cost of 1000 users in one response,
// each way this port offers: the REST list (httpapi, one JSON document)
// and the streams. Compare allocations and time per list:
//
//	go test ./streamapi -run XXX -bench List1000 -benchmem
func BenchmarkList1000(b *testing.B) {
	st := store.NewMemory(store.Options{})
	if err := st.Seed(1000, 0); err != nil {
		b.Fatal(err)
	}
	rest, err := httpapi.New(st, httpapi.Options{})
	if err != nil {
		b.Fatal(err)
	}
	h := streamapi.New(st, rest, streamapi.Options{})
	empty := []byte{0, 0, 0, 0, 0}
	for _, c := range []struct {
		name, method, path, ct, accept string
		body                           []byte
	}{
		{"rest-json-list", http.MethodGet, "/users", "", "application/json", nil},
		{"rest-protobuf-list", http.MethodGet, "/users", "", "application/x-protobuf", nil},
		{"ndjson", http.MethodGet, "/users", "", "application/x-ndjson", nil},
		{"sse", http.MethodGet, "/users/events", "", "", nil},
		{"connect-proto-stream", http.MethodPost, "/wirebench.v1.UserService/Stream", "application/connect+proto", "", empty},
		{"grpc-web-stream", http.MethodPost, "/wirebench.v1.UserService/Stream", "application/grpc-web+proto", "", empty},
	} {
		b.Run(c.name, func(b *testing.B) {
			var w *sink
			do := func() {
				r := httptest.NewRequest(c.method, c.path, bytes.NewReader(c.body))
				if c.ct != "" {
					r.Header.Set("Content-Type", c.ct)
				}
				if c.accept != "" {
					r.Header.Set("Accept", c.accept)
				}
				w = &sink{h: http.Header{}}
				h.ServeHTTP(w, r)
			}
			do()
			if w.n < 1000*40 {
				b.Fatalf("%d bytes for 1000 users", w.n)
			}
			b.SetBytes(int64(w.n))
			b.ReportAllocs()
			for b.Loop() {
				do()
			}
		})
	}
}
