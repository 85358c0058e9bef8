package kvhttp

import (
	"bytes"
	"net/http"
	"net/url"
	"strings"
	"unsafe"

	"github.com/valyala/fasthttp"

	"github.com/wirebench/wirebench/kv"
	"github.com/wirebench/wirebench/kv/access"
)

// MountFast is Mount for the fasthttp engine: /kv/ answered natively,
// with the net/http handler's routes, negotiation, limits, guard, error
// bodies and store calls (TestEnginesDiffer runs the same requests
// against both and requires the same answers), everything else by next,
// and the store's figures appended to next's /metrics.
//
// What differs is the engine's: fasthttp reads a whole body before any
// handler runs, so a body over MaxBody (which must be the engine's
// MaxRequestBodySize) is refused by the engine's error handler, before
// the token or the Content-Type are looked at. Replication routes answer
// 501 (a stream needs the net/http engine's flushing).
func MountFast(st *kv.Store, next fasthttp.RequestHandler, opts Options) fasthttp.RequestHandler {
	if opts.MaxBody <= 0 {
		opts.MaxBody = 8 << 20
	}
	f := &fastHandler{h: &handler{st: st, opts: opts}, next: next}
	return f.serve
}

type fastHandler struct {
	h    *handler
	next fasthttp.RequestHandler
}

// fastReq is what the /kv/ routes read of a request. The strings are
// views of fasthttp's buffers (valid until the handler returns; nothing
// keeps them): a key the store keeps is copied (ownedKey).
type fastReq struct {
	ctx    *fasthttp.RequestCtx
	method string
	path   string // escaped, as net/http's URL.EscapedPath
	rest   string // after /kv/, escaped
	accept string
	auth   string
}

// view is b as a string without copying, for the handler's duration.
func view(b []byte) string { return unsafe.String(unsafe.SliceData(b), len(b)) }

func (f *fastHandler) serve(ctx *fasthttp.RequestCtx) {
	p := ctx.Request.URI().PathOriginal()
	switch {
	case kvPath(p):
		if proto := ctx.Request.Header.Protocol(); len(proto) < 6 || proto[5] != '1' {
			// As the REST API on this engine: HTTP/1.x only.
			ctx.Error("unsupported protocol version", fasthttp.StatusHTTPVersionNotSupported)
			ctx.SetConnectionClose()
			return
		}
		r := fastReq{ctx: ctx, method: view(ctx.Method()), path: escapedPath(p)}
		for k, v := range ctx.Request.Header.All() {
			// One pass for both, as net/http's Header.Get: the first
			// value. The stored names are canonical (fasthttp
			// normalizes them), so an exact comparison finds them.
			switch {
			case r.accept == "" && string(k) == "Accept":
				r.accept = view(v)
			case r.auth == "" && string(k) == "Authorization":
				r.auth = view(v)
			}
		}
		if f.guard(&r) {
			f.serveKV(&r)
		}
	case string(ctx.Path()) == "/metrics":
		f.metrics(ctx)
	default:
		f.next(ctx)
	}
}

// escapedPath is what net/http's URL.EscapedPath makes of the request's
// path p: p itself when every byte may stand unescaped in a path (as
// url's validEncoded), else p decoded and escaped again (so that both
// engines cut the same path into the same rest and key).
func escapedPath(p []byte) string {
	for _, c := range p {
		if !pathByte(c) {
			d, err := url.PathUnescape(string(p))
			if err != nil {
				return string(p) // net/http refuses such a target (400): so does the key
			}
			u := url.URL{Path: d}
			return u.EscapedPath()
		}
	}
	return view(p)
}

// pathByte: c may stand in an escaped path as it is (url's validEncoded).
func pathByte(c byte) bool {
	switch {
	case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9':
		return true
	}
	return strings.IndexByte("-_.~!$&'()*+,;=:@[]/%", c) >= 0
}

// kvPath: the path, decoded and not cleaned (as net/http's r.URL.Path
// that Mount's callers route on), starts with /kv/.
func kvPath(p []byte) bool {
	if bytes.HasPrefix(p, []byte("/kv/")) {
		return true
	}
	if bytes.IndexByte(p, '%') < 0 {
		return false
	}
	d, err := url.PathUnescape(string(p))
	return err == nil && strings.HasPrefix(d, "/kv/")
}

func (f *fastHandler) fail(r *fastReq, status int, format string, args ...any) {
	r.ctx.Response.Header.SetContentType("application/json")
	r.ctx.SetStatusCode(status)
	r.ctx.SetBody(errorBody(format, args...))
}

// guard is handler.guard on fasthttp.
func (f *fastHandler) guard(r *fastReq) bool {
	g := &f.h.opts.Guard
	if g.Limiter != nil {
		client := access.ClientOf(r.ctx.RemoteAddr().String())
		if !g.Limiter.Allow(client) {
			r.ctx.Response.Header.Set("Retry-After", "1")
			f.fail(r, http.StatusTooManyRequests, "rate limit exceeded for %s", client)
			return false
		}
	}
	if !bearerOK(r.auth, g.Token) {
		r.ctx.Response.Header.Set("WWW-Authenticate", `Bearer realm="wirebench-kv"`)
		f.fail(r, http.StatusUnauthorized, "authentication required: send Authorization: Bearer <token>")
		return false
	}
	if g.Repl != nil && strings.HasPrefix(decoded(r.path), "/kv/_repl/") {
		// What http.Error answers on the net/http engine's 501 stand-in.
		r.ctx.Response.Header.Set("X-Content-Type-Options", "nosniff")
		r.ctx.Response.Header.SetContentType("text/plain; charset=utf-8")
		r.ctx.SetStatusCode(http.StatusNotImplemented)
		r.ctx.SetBodyString("replication needs the leader on --engine nethttp\n")
		return false
	}
	rest, ok := restOf(r.path)
	r.rest = rest
	if g.ReadOnly != nil && g.ReadOnly() && isWriteReq(r.method, rest, ok) {
		f.fail(r, http.StatusForbidden, "READONLY You can't write against a read only replica.")
		return false
	}
	return true
}

// decoded is p unescaped (p itself when it has no escape or a bad one).
func decoded(p string) string {
	if strings.IndexByte(p, '%') < 0 {
		return p
	}
	if d, err := url.PathUnescape(p); err == nil {
		return d
	}
	return p
}

func (f *fastHandler) serveKV(r *fastReq) {
	rest, ok := restOf(r.path)
	if !ok {
		f.fail(r, http.StatusNotFound, "no route %q: the path must start with /kv/", r.path)
		return
	}
	switch {
	case rest == "keys" && r.method == http.MethodGet:
		f.keys(r)
		return
	case rest == "mget" && r.method == http.MethodPost:
		f.mget(r)
		return
	case rest == "mset" && r.method == http.MethodPost:
		f.mset(r)
		return
	}
	// The key stays a view of the request for a read; a write gets a
	// copy, since the store may keep it (as the map's key, or to put it
	// back when the AOF refuses the write).
	key, err := unescapeKey(rest)
	if err != nil {
		f.fail(r, http.StatusBadRequest, "key: %v", err)
		return
	}
	if len(key) == 0 || len(key) > kv.MaxKeyLen {
		f.fail(r, http.StatusBadRequest, "key must be 1..%d bytes, got %d", kv.MaxKeyLen, len(key))
		return
	}
	switch r.method {
	case http.MethodGet, http.MethodHead:
		f.get(r, key)
	case http.MethodPut:
		f.put(r, strings.Clone(key))
	case http.MethodDelete:
		f.del(r, strings.Clone(key)) // a refused DELETE puts the key back (the AOF's undo)
	case http.MethodPatch:
		if status, msg := expireKey(f.h.st, strings.Clone(key), view(r.ctx.URI().QueryString())); status != http.StatusNoContent {
			f.fail(r, status, "%s", msg)
		} else {
			r.ctx.SetStatusCode(status)
		}
	default:
		r.ctx.Response.Header.Set("Allow", allowKey)
		f.fail(r, http.StatusMethodNotAllowed, "method %s not allowed on /kv/{key}", r.method)
	}
}

// body is the request's body within MaxBody: fasthttp has read it (its
// MaxRequestBodySize refuses more), this repeats the check with
// handler.body's messages in case the engine was given a larger limit.
func (f *fastHandler) body(r *fastReq) ([]byte, bool) {
	b := r.ctx.PostBody()
	if int64(len(b)) > f.h.opts.MaxBody {
		if n := r.ctx.Request.Header.ContentLength(); n > 0 {
			f.fail(r, http.StatusRequestEntityTooLarge, "body of %d bytes exceeds the limit of %d", n, f.h.opts.MaxBody)
		} else {
			f.fail(r, http.StatusRequestEntityTooLarge, "body exceeds the limit of %d bytes", f.h.opts.MaxBody)
		}
		return nil, false
	}
	return b, true
}

// reqFormat is the body's format from Content-Type (reqFormat).
func (f *fastHandler) reqFormat(r *fastReq) (format, bool, bool) {
	ct := view(r.ctx.Request.Header.ContentType())
	if isRawType(ct) {
		return jsonFormat, true, true
	}
	fm, ok := formatFor(ct)
	if !ok {
		f.fail(r, http.StatusUnsupportedMediaType, "unsupported Content-Type %q", ct)
		return nil, false, false
	}
	return fm, false, true
}

func (f *fastHandler) writeErr(r *fastReq, err error) {
	status, msg := errStatus(err)
	f.fail(r, status, "%s", msg)
}

func (f *fastHandler) put(r *fastReq, key string) {
	fm, raw, ok := f.reqFormat(r)
	if !ok {
		return
	}
	b, ok := f.body(r)
	if !ok {
		return
	}
	var val []byte
	var ttl int64
	if raw {
		val = b // the store copies it
		var err error
		if ttl, err = ttlQuery(view(r.ctx.URI().QueryString())); err != nil {
			f.fail(r, http.StatusBadRequest, "%v", err)
			return
		}
	} else {
		var err error
		if val, ttl, err = fm.decodePut(b); err != nil {
			f.fail(r, http.StatusBadRequest, "decoding %s body: %v", fm.name(), err)
			return
		}
	}
	if err := checkTTL(ttl); err != nil {
		f.fail(r, http.StatusBadRequest, "%v", err)
		return
	}
	_, t, err := f.h.st.Set(key, val, kv.SetOpts{Exp: expAt(f.h.st, ttl)})
	if err == nil {
		err = f.h.st.Wait(t)
	}
	if err != nil {
		f.writeErr(r, err)
		return
	}
	r.ctx.SetStatusCode(http.StatusNoContent)
}

func (f *fastHandler) get(r *fastReq, key string) {
	fm, raw, ok := accepted(r.accept, jsonFormat)
	if !ok {
		f.fail(r, http.StatusNotAcceptable, "no acceptable format in %q", r.accept)
		return
	}
	val, exp, found := f.h.st.Get(key)
	if !found {
		f.fail(r, http.StatusNotFound, "no key %q", key)
		return
	}
	if raw {
		// fasthttp sends no body to a HEAD (SkipBody) and keeps the
		// length, as Mount's explicit Content-Length does.
		r.ctx.Response.Header.SetContentTypeBytes(rawType)
		r.ctx.SetBody(val) // a copy: the reply is written after we return
		return
	}
	b, err := fm.encodeGet(key, val, ttlLeft(f.h.st, exp))
	if err != nil {
		f.fail(r, http.StatusInternalServerError, "encoding %s: %v", fm.name(), err)
		return
	}
	f.reply(r, fm, b)
}

var rawType = []byte(mediaRaw)

func (f *fastHandler) reply(r *fastReq, fm format, b []byte) {
	r.ctx.Response.Header.SetContentType(fm.media())
	r.ctx.SetBody(b)
}

func (f *fastHandler) del(r *fastReq, key string) {
	n, t, err := f.h.st.Del(key)
	if err == nil {
		err = f.h.st.Wait(t)
	}
	if err != nil {
		f.writeErr(r, err)
		return
	}
	if n == 0 {
		f.fail(r, http.StatusNotFound, "no key %q", key)
		return
	}
	r.ctx.SetStatusCode(http.StatusNoContent)
}

// objFormats is objFormats on fasthttp.
func (f *fastHandler) objFormats(r *fastReq) (in, out format, ok bool) {
	in, raw, ok := f.reqFormat(r)
	if !ok {
		return nil, nil, false
	}
	if raw {
		f.fail(r, http.StatusUnsupportedMediaType, "this route takes an object, not %s", mediaRaw)
		return nil, nil, false
	}
	out, raw, ok = accepted(r.accept, in)
	if !ok || raw {
		f.fail(r, http.StatusNotAcceptable, "no acceptable object format in %q", r.accept)
		return nil, nil, false
	}
	return in, out, true
}

func (f *fastHandler) mget(r *fastReq) {
	in, out, ok := f.objFormats(r)
	if !ok {
		return
	}
	b, ok := f.body(r)
	if !ok {
		return
	}
	rb, status, err := f.h.doMGet(in, out, b)
	if err != nil {
		f.fail(r, status, "%s", err.Error())
		return
	}
	f.reply(r, out, rb)
}

func (f *fastHandler) mset(r *fastReq) {
	in, _, ok := f.objFormats(r)
	if !ok {
		return
	}
	b, ok := f.body(r)
	if !ok {
		return
	}
	// A copy: whatever a decoder keeps of the body (a key) must not be
	// fasthttp's buffer, which the next request reuses.
	if status, err := f.h.doMSet(in, bytes.Clone(b)); err != nil {
		f.fail(r, status, "%s", err.Error())
		return
	}
	r.ctx.SetStatusCode(http.StatusNoContent)
}

func (f *fastHandler) keys(r *fastReq) {
	fm, raw, ok := accepted(r.accept, jsonFormat)
	if !ok || raw {
		f.fail(r, http.StatusNotAcceptable, "no acceptable object format in %q", r.accept)
		return
	}
	// url.ParseQuery, as r.URL.Query() on net/http (fasthttp's own
	// parser treats ';' and bad escapes otherwise).
	q, _ := url.ParseQuery(string(r.ctx.URI().QueryString()))
	b, status, err := f.h.doKeys(fm, q)
	if err != nil {
		f.fail(r, status, "%s", err.Error())
		return
	}
	f.reply(r, fm, b)
}

// metrics serves next's /metrics with the store's figures appended, as
// handler.metrics does.
func (f *fastHandler) metrics(ctx *fasthttp.RequestCtx) {
	ctx.Request.Header.Del("Accept-Encoding")
	ctx.Request.Header.Set("Accept", "text/plain")
	f.next(ctx)
	if ctx.Response.StatusCode() == http.StatusOK {
		ctx.Response.AppendBody(kvMetrics(f.h))
	}
}
