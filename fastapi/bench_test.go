package fastapi

import (
	"testing"

	"github.com/valyala/fasthttp"
)

// BenchmarkServe is the fasthttp adapter and the core on the REST hot path
// (issue 17): GET one user, the 100-user list and a create, in JSON.
// Compare runs with benchstat (-count 6).
func BenchmarkServe(b *testing.B) {
	body := []byte(`{"name":"Ada Lovelace","email":"ada@example.com"}`)
	for _, c := range []struct {
		name, method, uri string
		body              []byte
		want              int
	}{
		{"get", "GET", "http://x/users/1", nil, fasthttp.StatusOK},
		{"list", "GET", "http://x/users", nil, fasthttp.StatusOK},
		{"create", "POST", "http://x/users", body, fasthttp.StatusCreated},
	} {
		b.Run(c.name, func(b *testing.B) {
			a := newAdapter(b)
			var req fasthttp.Request
			req.Header.SetMethod(c.method)
			req.SetRequestURI(c.uri)
			if c.body != nil {
				req.Header.SetContentType("application/json")
				req.SetBody(c.body)
			}
			var ctx fasthttp.RequestCtx
			ctx.Init(&req, nil, nil)
			b.ReportAllocs()
			for b.Loop() {
				ctx.Response.Reset()
				a.serve(&ctx)
				if s := ctx.Response.StatusCode(); s != c.want {
					b.Fatalf("status %d, want %d", s, c.want)
				}
			}
		})
	}
}
