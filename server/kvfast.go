package server

import (
	"github.com/valyala/fasthttp"

	"github.com/wirebench/wirebench/kv"
	"github.com/wirebench/wirebench/kvhttp"
)

// mountKVFast serves /kv/ (and the store's /metrics lines) on the
// fasthttp engine natively, in front of the REST API. Through
// fasthttpadaptor, as before, every request built a net/http request, a
// context and a channel (~15% of the engine's CPU per request), and
// stored keys were views of fasthttp's reused buffers.
func mountKVFast(srv *fasthttp.Server, st *kv.Store, o kvhttp.Options) {
	srv.Handler = kvhttp.MountFast(st, srv.Handler, o)
}
