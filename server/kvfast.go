package server

import (
	"bytes"
	"net/http"

	"github.com/valyala/fasthttp"
	"github.com/valyala/fasthttp/fasthttpadaptor"

	"github.com/wirebench/wirebench/kv"
	"github.com/wirebench/wirebench/kvhttp"
)

// mountKVFast serves /kv/ on the fasthttp engine through the net/http
// handler (an adaptor: correct, not the fast path; the KV figures are on
// the net/http engine and RESP).
func mountKVFast(srv *fasthttp.Server, st *kv.Store, o kvhttp.Options) {
	inner := srv.Handler
	// The adaptor buffers whole responses: a replication stream never
	// ends, so it is refused here rather than held in memory.
	o.Guard.Repl = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "replication needs the leader on --engine nethttp", http.StatusNotImplemented)
	})
	kvh := fasthttpadaptor.NewFastHTTPHandler(kvhttp.Mount(st, http.NotFoundHandler(), o))
	srv.Handler = func(ctx *fasthttp.RequestCtx) {
		if bytes.HasPrefix(ctx.Path(), []byte("/kv/")) {
			kvh(ctx)
			return
		}
		inner(ctx)
	}
}
