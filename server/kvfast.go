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
func mountKVFast(srv *fasthttp.Server, st *kv.Store, maxBody int64) {
	inner := srv.Handler
	kvh := fasthttpadaptor.NewFastHTTPHandler(kvhttp.Mount(st, http.NotFoundHandler(), kvhttp.Options{MaxBody: maxBody}))
	srv.Handler = func(ctx *fasthttp.RequestCtx) {
		if bytes.HasPrefix(ctx.Path(), []byte("/kv/")) {
			kvh(ctx)
			return
		}
		inner(ctx)
	}
}
