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
	b, _ := json.Marshal(map[string]string{"error": fmt.Sprintf(format, args...)})
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	w.Write(append(b, '\n'))
}

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
	key, err := url.PathUnescape(raw)
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
	default:
		w.Header().Set("Allow", "GET, HEAD, PUT, DELETE")
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
	seg, rest, ok := strings.Cut(strings.TrimPrefix(r.URL.EscapedPath(), "/"), "/")
	if !ok {
		return "", false
	}
	if d, err := url.PathUnescape(seg); err != nil || d != "kv" {
		return "", false
	}
	return rest, true
}

// body reads the request body within MaxBody.
func (h *handler) body(w http.ResponseWriter, r *http.Request) ([]byte, bool) {
	if r.ContentLength > h.opts.MaxBody {
		fail(w, http.StatusRequestEntityTooLarge, "body of %d bytes exceeds the limit of %d", r.ContentLength, h.opts.MaxBody)
		return nil, false
	}
	var buf bytes.Buffer
	if r.ContentLength > 0 {
		buf.Grow(int(r.ContentLength))
	}
	_, err := buf.ReadFrom(io.LimitReader(r.Body, h.opts.MaxBody+1))
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

// reqFormat is the body's format from Content-Type; raw for octet-stream.
func reqFormat(w http.ResponseWriter, r *http.Request) (format, bool, bool) {
	ct := r.Header.Get("Content-Type")
	if strings.EqualFold(strings.TrimSpace(strings.SplitN(ct, ";", 2)[0]), mediaRaw) {
		f, _ := formatFor("")
		return f, true, true
	}
	f, ok := formatFor(ct)
	if !ok {
		fail(w, http.StatusUnsupportedMediaType, "unsupported Content-Type %q", ct)
		return nil, false, false
	}
	return f, false, true
}

// writeErr maps a store error to a status.
func writeErr(w http.ResponseWriter, err error) {
	switch {
	case errors.Is(err, kv.ErrDurability), errors.Is(err, kv.ErrClosed):
		fail(w, http.StatusServiceUnavailable, "%v", err)
	case errors.Is(err, kv.ErrKeyLen), errors.Is(err, kv.ErrValueLen):
		fail(w, http.StatusBadRequest, "%v", err)
	default:
		fail(w, http.StatusInternalServerError, "%v", err)
	}
}

func (h *handler) put(w http.ResponseWriter, r *http.Request, key string) {
	f, raw, ok := reqFormat(w, r)
	if !ok {
		return
	}
	b, ok := h.body(w, r)
	if !ok {
		return
	}
	var val []byte
	var ttl int64
	if raw {
		val = b
		if s := r.URL.Query().Get("ttl_ms"); s != "" {
			n, err := strconv.ParseInt(s, 10, 64)
			if err != nil {
				fail(w, http.StatusBadRequest, "ttl_ms: %v", err)
				return
			}
			ttl = n
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
	def, _ := formatFor("")
	f, raw, ok := accepted(r.Header.Get("Accept"), def)
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
		w.Header().Set("Content-Type", mediaRaw)
		w.Header().Set("Content-Length", strconv.Itoa(len(val)))
		w.WriteHeader(http.StatusOK)
		if r.Method != http.MethodHead {
			w.Write(val)
		}
		return
	}
	ttl := int64(0)
	if exp != 0 {
		ttl = max(exp-h.st.Now(), 1) // 0 means none: a live key has >= 1
	}
	b, err := f.encodeGet(key, val, ttl)
	if err != nil {
		fail(w, http.StatusInternalServerError, "encoding %s: %v", f.name(), err)
		return
	}
	reply(w, r, f, b)
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
	b, ok := h.body(w, r)
	if !ok {
		return
	}
	keys, err := in.decodeKeys(b)
	if err != nil {
		fail(w, http.StatusBadRequest, "decoding %s body: %v", in.name(), err)
		return
	}
	if len(keys) > MaxBatch {
		fail(w, http.StatusBadRequest, "%d keys: at most %d per mget", len(keys), MaxBatch)
		return
	}
	vals, found := make([][]byte, len(keys)), make([]bool, len(keys))
	for i, k := range keys {
		vals[i], _, found[i] = h.st.Get(k)
	}
	rb, err := out.encodeValues(vals, found)
	if err != nil {
		fail(w, http.StatusInternalServerError, "encoding %s: %v", out.name(), err)
		return
	}
	reply(w, r, out, rb)
}

func (h *handler) mset(w http.ResponseWriter, r *http.Request) {
	in, _, ok := objFormats(w, r)
	if !ok {
		return
	}
	b, ok := h.body(w, r)
	if !ok {
		return
	}
	items, err := in.decodeItems(b)
	if err != nil {
		fail(w, http.StatusBadRequest, "decoding %s body: %v", in.name(), err)
		return
	}
	if len(items) > MaxBatch {
		fail(w, http.StatusBadRequest, "%d items: at most %d per mset", len(items), MaxBatch)
		return
	}
	kvs := make([]kv.Item, len(items))
	for i, it := range items {
		if len(it.key) == 0 || len(it.key) > kv.MaxKeyLen {
			fail(w, http.StatusBadRequest, "item %d: key must be 1..%d bytes", i, kv.MaxKeyLen)
			return
		}
		if err := checkTTL(it.ttl); err != nil {
			fail(w, http.StatusBadRequest, "item %d: %v", i, err)
			return
		}
		kvs[i] = kv.Item{Key: it.key, Val: it.val, Exp: expAt(h.st, it.ttl)}
	}
	t, err := h.st.MSet(kvs)
	if err == nil {
		err = h.st.Wait(t)
	}
	if err != nil {
		writeErr(w, err)
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

func (h *handler) keys(w http.ResponseWriter, r *http.Request) {
	def, _ := formatFor("")
	f, raw, ok := accepted(r.Header.Get("Accept"), def)
	if !ok || raw {
		fail(w, http.StatusNotAcceptable, "no acceptable object format in %q", r.Header.Get("Accept"))
		return
	}
	q := r.URL.Query()
	prefix := q.Get("prefix")
	limit := DefaultKeysLimit
	if s := q.Get("limit"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n < 1 || n > MaxKeysLimit {
			fail(w, http.StatusBadRequest, "limit must be 1..%d, got %q", MaxKeysLimit, s)
			return
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
		fail(w, http.StatusInternalServerError, "encoding %s: %v", f.name(), err)
		return
	}
	reply(w, r, f, b)
}
