package server

import (
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/wirebench/wirebench/httpapi"
	"github.com/wirebench/wirebench/kv"
	"github.com/wirebench/wirebench/kvhttp"
	"github.com/wirebench/wirebench/store"
	"github.com/wirebench/wirebench/streamapi"
	"github.com/wirebench/wirebench/webbench"
)

// BenchmarkRESTGetDispatch: GET /users/1 in process, through the routing
// table against the four nested prefix handlers it replaced (webbench →
// streamapi → kvhttp → /airports → REST), with the REST API replaced by a
// handler that does nothing, so only the routing is timed
// (go test ./server -run '^$' -bench Dispatch).
func BenchmarkRESTGetDispatch(b *testing.B) {
	st := store.NewMemory(store.Options{})
	if err := st.Seed(100, 100); err != nil {
		b.Fatal(err)
	}
	api := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(200) })
	kvs, err := kv.Open(kv.Options{})
	if err != nil {
		b.Fatal(err)
	}
	defer kvs.Close()
	bulk := http.NotFoundHandler()
	s := &Server{KV: kvs, life: newLife()}
	table := s.routes(st, api, bulk, kvhttp.Guard{}, Options{})
	airports := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/airports" {
			bulk.ServeHTTP(w, r)
			return
		}
		api.ServeHTTP(w, r)
	})
	kh := kvhttp.Mount(kvs, airports, kvhttp.Options{MaxBody: httpapi.DefaultMaxBody})
	nested := webbench.New(streamapi.New(st, kh, streamapi.Options{}), webbench.Options{})
	req := httptest.NewRequest("GET", "/users/1", nil)
	for _, c := range []struct {
		name string
		h    http.Handler
	}{{"nested", nested}, {"table", table}} {
		b.Run(c.name, func(b *testing.B) {
			var w nopWriter
			for b.Loop() {
				c.h.ServeHTTP(&w, req)
			}
			if w.code != 200 {
				b.Fatalf("status %d", w.code)
			}
		})
	}
}

type nopWriter struct{ code int }

func (w *nopWriter) Header() http.Header         { return http.Header{} }
func (w *nopWriter) Write(p []byte) (int, error) { return len(p), nil }
func (w *nopWriter) WriteHeader(code int)        { w.code = code }
