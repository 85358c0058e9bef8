// Package kvhttp is the key-value store over HTTP (the /kv/ routes of the
// KV contract): the raw body for application/octet-stream, an object in
// any of our formats otherwise. Mount puts it in front of another handler
// and adds the store's figures to that handler's /metrics.
package kvhttp

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/wirebench/wirebench/kv"
)

// Limits.
const (
	DefaultKeysLimit = 1000
	MaxKeysLimit     = 100000
	// MaxBatch bounds the keys of one mget or items of one mset.
	MaxBatch = 100000
)

// Options configures the handler.
type Options struct {
	// MaxBody bounds request bodies in bytes (413 beyond); required.
	MaxBody int64
	// Access control and replication (guard.go); zero values are off.
	Guard Guard
}

type handler struct {
	st   *kv.Store
	next http.Handler
	opts Options
}

// Mount returns a handler serving /kv/ from st and everything else from
// next, with the store's figures appended to next's /metrics.
func Mount(st *kv.Store, next http.Handler, opts Options) http.Handler {
	if opts.MaxBody <= 0 {
		opts.MaxBody = 8 << 20
	}
	return &handler{st: st, next: next, opts: opts}
}

func (h *handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	p := r.URL.Path
	switch {
	case strings.HasPrefix(p, "/kv/"):
		if h.guard(w, r) {
			h.serveKV(w, r)
		}
	case p == "/metrics":
		h.metrics(w, r)
	default:
		h.next.ServeHTTP(w, r)
	}
}

// fail answers with a JSON {"error"} object (errors are not negotiated:
// a client that cannot read JSON still has the status).
func fail(w http.ResponseWriter, status int, format string, args ...any) {
	w.Header()["Content-Type"] = jsonType
	w.WriteHeader(status)
	w.Write(errorBody(format, args...))
}

// errorBody is every error's body, on both engines.
func errorBody(format string, args ...any) []byte {
	b, _ := json.Marshal(map[string]string{"error": fmt.Sprintf(format, args...)})
	return append(b, '\n')
}

// netBuffered is net/http's response buffer (bufferBeforeChunkingSize):
// a body up to this size, written once, is still buffered when the
// handler returns, and net/http sends it with its Content-Length.
const netBuffered = 2048

// Header values set by assignment, shared: net/http only reads them, and
// Header.Set would allocate a one-element slice per reply.
var (
	jsonType = []string{"application/json"}
	rawTypes = []string{mediaRaw}
)

func (h *handler) serveKV(w http.ResponseWriter, r *http.Request) {
	raw, ok := kvRest(r)
	if !ok {
		fail(w, http.StatusNotFound, "no route %q: the path must start with /kv/", r.URL.EscapedPath())
		return
	}
	switch {
	case raw == "keys" && r.Method == http.MethodGet:
		h.keys(w, r)
		return
	case raw == "mget" && r.Method == http.MethodPost:
		h.mget(w, r)
		return
	case raw == "mset" && r.Method == http.MethodPost:
		h.mset(w, r)
		return
	}
	key, err := unescapeKey(raw)
	if err != nil {
		fail(w, http.StatusBadRequest, "key: %v", err)
		return
	}
	if len(key) == 0 || len(key) > kv.MaxKeyLen {
		fail(w, http.StatusBadRequest, "key must be 1..%d bytes, got %d", kv.MaxKeyLen, len(key))
		return
	}
	switch r.Method {
	case http.MethodGet, http.MethodHead:
		h.get(w, r, key)
	case http.MethodPut:
		h.put(w, r, key)
	case http.MethodDelete:
		h.del(w, r, key)
	case http.MethodPatch:
		if status, msg := expireKey(h.st, key, r.URL.RawQuery); status != http.StatusNoContent {
			fail(w, status, "%s", msg)
		} else {
			w.WriteHeader(status)
		}
	default:
		w.Header().Set("Allow", allowKey)
		fail(w, http.StatusMethodNotAllowed, "method %s not allowed on /kv/{key}", r.Method)
	}
}

// kvRest is what follows the first segment of the request's escaped
// path, which must decode to "kv": the same path the route matched
// (r.URL.Path starts with "/kv/"), so /%6Bv/enc is the key "enc", never
// "/kv/enc". The rest stays escaped: %2F is part of a key, not a
// separator, and a key named "keys", "mget" or "mset" is addressed as
// %6Beys etc.
func kvRest(r *http.Request) (string, bool) {
	if r.URL.RawPath == "" && strings.IndexByte(r.URL.Path, '%') < 0 {
		// EscapedPath would escape Path again (an allocation) to
		// find the request's path, and unescaping the key would give
		// back Path's part: Path is the key, and has no escape.
		return restOf(r.URL.Path)
	}
	return restOf(r.URL.EscapedPath())
}

// restOf is kvRest on an escaped path, on both engines.
func restOf(escaped string) (string, bool) {
	if rest, ok := strings.CutPrefix(escaped, "/kv/"); ok {
		return rest, true
	}
	seg, rest, ok := strings.Cut(strings.TrimPrefix(escaped, "/"), "/")
	if !ok {
		return "", false
	}
	if d, err := url.PathUnescape(seg); err != nil || d != "kv" {
		return "", false
	}
	return rest, true
}

// unescapeKey is the key a route's rest names: the same string when it
// has no escape.
func unescapeKey(rest string) (string, error) {
	if strings.IndexByte(rest, '%') < 0 {
		return rest, nil
	}
	return url.PathUnescape(rest)
}

// body reads the request body within MaxBody into buf.
func (h *handler) body(w http.ResponseWriter, r *http.Request, buf *bytes.Buffer) ([]byte, bool) {
	if r.ContentLength > h.opts.MaxBody {
		fail(w, http.StatusRequestEntityTooLarge, "body of %d bytes exceeds the limit of %d", r.ContentLength, h.opts.MaxBody)
		return nil, false
	}
	if r.ContentLength > 0 {
		buf.Grow(int(r.ContentLength))
	}
	var from io.Reader = r.Body
	if r.ContentLength < 0 {
		// A declared length is enforced by net/http's body reader
		// (it ends there), and was checked above: the limit is for
		// bodies of unknown length.
		from = io.LimitReader(r.Body, h.opts.MaxBody+1)
	}
	_, err := buf.ReadFrom(from)
	if err != nil {
		fail(w, http.StatusBadRequest, "reading body: %v", err)
		return nil, false
	}
	if int64(buf.Len()) > h.opts.MaxBody {
		fail(w, http.StatusRequestEntityTooLarge, "body exceeds the limit of %d bytes", h.opts.MaxBody)
		return nil, false
	}
	return buf.Bytes(), true
}

var bodyPool = sync.Pool{New: func() any { return new(bytes.Buffer) }}

// maxPooledBody: larger buffers are left to the collector, so that one
// large PUT does not pin its buffer in the pool.
const maxPooledBody = 64 << 10

func putBody(buf *bytes.Buffer) {
	if buf.Cap() <= maxPooledBody {
		buf.Reset()
		bodyPool.Put(buf)
	}
}

// reqFormat is the body's format from Content-Type; raw for octet-stream.
func reqFormat(w http.ResponseWriter, r *http.Request) (format, bool, bool) {
	ct := r.Header.Get("Content-Type")
	if isRawType(ct) {
		return jsonFormat, true, true
	}
	f, ok := formatFor(ct)
	if !ok {
		fail(w, http.StatusUnsupportedMediaType, "unsupported Content-Type %q", ct)
		return nil, false, false
	}
	return f, false, true
}

// isRawType: the media type (parameters aside) is application/octet-stream.
func isRawType(ct string) bool {
	mt, _, _ := strings.Cut(ct, ";")
	return strings.EqualFold(strings.TrimSpace(mt), mediaRaw)
}

// writeErr maps a store error to a status.
func writeErr(w http.ResponseWriter, err error) {
	status, msg := errStatus(err)
	fail(w, status, "%s", msg)
}

// errStatus is a store error's status and message, on both engines.
func errStatus(err error) (int, string) {
	switch {
	case errors.Is(err, kv.ErrDurability), errors.Is(err, kv.ErrClosed):
		return http.StatusServiceUnavailable, err.Error()
	case errors.Is(err, kv.ErrKeyLen), errors.Is(err, kv.ErrValueLen):
		return http.StatusBadRequest, err.Error()
	}
	return http.StatusInternalServerError, err.Error()
}

// ttlQuery is a raw PUT's ttl_ms from the query (url.ParseQuery's
// reading on both engines); 0 without one.
func ttlQuery(rawQuery string) (int64, error) {
	if rawQuery == "" {
		return 0, nil // no map to build
	}
	q, _ := url.ParseQuery(rawQuery)
	s := q.Get("ttl_ms")
	if s == "" {
		return 0, nil
	}
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		return 0, fmt.Errorf("ttl_ms: %w", err)
	}
	return n, nil
}

func (h *handler) put(w http.ResponseWriter, r *http.Request, key string) {
	f, raw, ok := reqFormat(w, r)
	if !ok {
		return
	}
	// The store copies the value: the body's buffer is reused.
	buf := bodyPool.Get().(*bytes.Buffer)
	defer putBody(buf)
	b, ok := h.body(w, r, buf)
	if !ok {
		return
	}
	var val []byte
	var ttl int64
	if raw {
		val = b
		var err error
		if ttl, err = ttlQuery(r.URL.RawQuery); err != nil {
			fail(w, http.StatusBadRequest, "%v", err)
			return
		}
	} else {
		var err error
		if val, ttl, err = f.decodePut(b); err != nil {
			fail(w, http.StatusBadRequest, "decoding %s body: %v", f.name(), err)
			return
		}
	}
	if err := checkTTL(ttl); err != nil {
		fail(w, http.StatusBadRequest, "%v", err)
		return
	}
	_, t, err := h.st.Set(key, val, kv.SetOpts{Exp: expAt(h.st, ttl)})
	if err == nil {
		err = h.st.Wait(t)
	}
	if err != nil {
		writeErr(w, err)
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

func (h *handler) get(w http.ResponseWriter, r *http.Request, key string) {
	f, raw, ok := accepted(r.Header.Get("Accept"), jsonFormat)
	if !ok {
		fail(w, http.StatusNotAcceptable, "no acceptable format in %q", r.Header.Get("Accept"))
		return
	}
	val, exp, found := h.st.Get(key)
	if !found {
		fail(w, http.StatusNotFound, "no key %q", key)
		return
	}
	if raw {
		hd := w.Header()
		hd["Content-Type"] = rawTypes
		if r.Method == http.MethodHead || len(val) > netBuffered {
			hd["Content-Length"] = []string{strconv.Itoa(len(val))}
		}
		// Else net/http sets the same Content-Length itself, without
		// allocating: a reply that fits its buffer is sent when the
		// handler returns, with its length (TestRawContentLength).
		w.WriteHeader(http.StatusOK)
		if r.Method != http.MethodHead {
			w.Write(val)
		}
		return
	}
	b, err := f.encodeGet(key, val, ttlLeft(h.st, exp))
	if err != nil {
		fail(w, http.StatusInternalServerError, "encoding %s: %v", f.name(), err)
		return
	}
	reply(w, r, f, b)
}

// ttlLeft is a key's ttl_ms from its absolute expiry (0: none).
func ttlLeft(st *kv.Store, exp int64) int64 {
	if exp == 0 {
		return 0
	}
	return max(exp-st.Now(), 1) // 0 means none: a live key has >= 1
}

func reply(w http.ResponseWriter, r *http.Request, f format, b []byte) {
	w.Header().Set("Content-Type", f.media())
	w.Header().Set("Content-Length", strconv.Itoa(len(b)))
	w.WriteHeader(http.StatusOK)
	if r.Method != http.MethodHead {
		w.Write(b)
	}
}

func (h *handler) del(w http.ResponseWriter, r *http.Request, key string) {
	n, t, err := h.st.Del(key)
	if err == nil {
		err = h.st.Wait(t)
	}
	if err != nil {
		writeErr(w, err)
		return
	}
	if n == 0 {
		fail(w, http.StatusNotFound, "no key %q", key)
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

// allowKey is the methods of /kv/{key}.
const allowKey = "GET, HEAD, PUT, DELETE, PATCH"

// expireKey is PATCH /kv/{key}?ttl_ms=N on both engines: Redis's PEXPIRE,
// the key's TTL set from now. 204, 404 when there is no key; the TTL is
// required (DELETE removes a key, PUT without ttl_ms keeps one).
func expireKey(st *kv.Store, key, rawQuery string) (int, string) {
	ttl, err := ttlQuery(rawQuery)
	if err == nil {
		err = checkTTL(ttl)
	}
	if err != nil {
		return http.StatusBadRequest, err.Error()
	}
	if ttl == 0 {
		return http.StatusBadRequest, "PATCH /kv/{key} sets the key's TTL: give ?ttl_ms=N, N > 0"
	}
	ok, t, err := st.ExpireAt(key, st.Now()+ttl, 0)
	if err == nil {
		err = st.Wait(t)
	}
	if err != nil {
		return errStatus(err)
	}
	if !ok {
		return http.StatusNotFound, fmt.Sprintf("no key %q", key)
	}
	return http.StatusNoContent, ""
}

// objFormats negotiates a request with an object body and an object reply.
func objFormats(w http.ResponseWriter, r *http.Request) (in, out format, ok bool) {
	in, raw, ok := reqFormat(w, r)
	if !ok {
		return nil, nil, false
	}
	if raw {
		fail(w, http.StatusUnsupportedMediaType, "this route takes an object, not %s", mediaRaw)
		return nil, nil, false
	}
	out, raw, ok = accepted(r.Header.Get("Accept"), in)
	if !ok || raw {
		fail(w, http.StatusNotAcceptable, "no acceptable object format in %q", r.Header.Get("Accept"))
		return nil, nil, false
	}
	return in, out, true
}

func (h *handler) mget(w http.ResponseWriter, r *http.Request) {
	in, out, ok := objFormats(w, r)
	if !ok {
		return
	}
	b, ok := h.body(w, r, new(bytes.Buffer))
	if !ok {
		return
	}
	rb, status, err := h.doMGet(in, out, b)
	if err != nil {
		fail(w, status, "%s", err.Error())
		return
	}
	reply(w, r, out, rb)
}

// doMGet is mget's work on a body read: the reply, or a status and error.
func (h *handler) doMGet(in, out format, b []byte) ([]byte, int, error) {
	keys, err := in.decodeKeys(b)
	if err != nil {
		return nil, http.StatusBadRequest, fmt.Errorf("decoding %s body: %v", in.name(), err)
	}
	if len(keys) > MaxBatch {
		return nil, http.StatusBadRequest, fmt.Errorf("%d keys: at most %d per mget", len(keys), MaxBatch)
	}
	vals, found := make([][]byte, len(keys)), make([]bool, len(keys))
	for i, k := range keys {
		vals[i], _, found[i] = h.st.Get(k)
	}
	rb, err := out.encodeValues(vals, found)
	if err != nil {
		return nil, http.StatusInternalServerError, fmt.Errorf("encoding %s: %v", out.name(), err)
	}
	return rb, 0, nil
}

func (h *handler) mset(w http.ResponseWriter, r *http.Request) {
	in, _, ok := objFormats(w, r)
	if !ok {
		return
	}
	b, ok := h.body(w, r, new(bytes.Buffer))
	if !ok {
		return
	}
	if status, err := h.doMSet(in, b); err != nil {
		fail(w, status, "%s", err.Error())
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

// doMSet is mset's work on a body read: 0, or a status and error.
func (h *handler) doMSet(in format, b []byte) (int, error) {
	items, err := in.decodeItems(b)
	if err != nil {
		return http.StatusBadRequest, fmt.Errorf("decoding %s body: %v", in.name(), err)
	}
	if len(items) > MaxBatch {
		return http.StatusBadRequest, fmt.Errorf("%d items: at most %d per mset", len(items), MaxBatch)
	}
	kvs := make([]kv.Item, len(items))
	for i, it := range items {
		if len(it.key) == 0 || len(it.key) > kv.MaxKeyLen {
			return http.StatusBadRequest, fmt.Errorf("item %d: key must be 1..%d bytes", i, kv.MaxKeyLen)
		}
		if err := checkTTL(it.ttl); err != nil {
			return http.StatusBadRequest, fmt.Errorf("item %d: %v", i, err)
		}
		kvs[i] = kv.Item{Key: it.key, Val: it.val, Exp: expAt(h.st, it.ttl)}
	}
	t, err := h.st.MSet(kvs)
	if err == nil {
		err = h.st.Wait(t)
	}
	if err != nil {
		status, msg := errStatus(err)
		return status, errors.New(msg)
	}
	return 0, nil
}

func (h *handler) keys(w http.ResponseWriter, r *http.Request) {
	f, raw, ok := accepted(r.Header.Get("Accept"), jsonFormat)
	if !ok || raw {
		fail(w, http.StatusNotAcceptable, "no acceptable object format in %q", r.Header.Get("Accept"))
		return
	}
	b, status, err := h.doKeys(f, r.URL.Query())
	if err != nil {
		fail(w, status, "%s", err.Error())
		return
	}
	reply(w, r, f, b)
}

// doKeys is keys' work on the parsed query: the reply, or a status and error.
func (h *handler) doKeys(f format, q url.Values) ([]byte, int, error) {
	prefix := q.Get("prefix")
	limit := DefaultKeysLimit
	if s := q.Get("limit"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n < 1 || n > MaxKeysLimit {
			return nil, http.StatusBadRequest, fmt.Errorf("limit must be 1..%d, got %q", MaxKeysLimit, s)
		}
		limit = n
	}
	var keys []string
	h.st.Keys(func(k string) bool {
		if strings.HasPrefix(k, prefix) {
			keys = append(keys, k)
		}
		return true
	})
	slices.Sort(keys)
	if len(keys) > limit {
		keys = keys[:limit]
	}
	b, err := f.encodeKeys(keys)
	if err != nil {
		return nil, http.StatusInternalServerError, fmt.Errorf("encoding %s: %v", f.name(), err)
	}
	return b, 0, nil
}
