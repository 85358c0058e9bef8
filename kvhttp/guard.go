package kvhttp

import (
	"net/http"
	"strings"

	"github.com/wirebench/wirebench/kv/access"
)

// Guard is access control and replication for the /kv/ routes.
type Guard struct {
	// Token, when set, is required of every /kv/ request as
	// "Authorization: Bearer TOKEN" (401 without it).
	Token string
	// Limiter, when set, limits each client's /kv/ requests (429),
	// checked before the token, so that wrong tokens count too (as every
	// RESP command, AUTH included, does).
	Limiter *access.Limiter
	// ReadOnly, when it returns true, refuses writes with 403 (a replica).
	ReadOnly func() bool
	// Repl serves /kv/_repl/ (replication; behind the token too).
	Repl http.Handler
	// Metrics appends replication lines to /metrics.
	Metrics func() []byte
}

// guard applies the token, the rate limit, replication routes and the
// read-only switch; false when it answered.
func (h *handler) guard(w http.ResponseWriter, r *http.Request) bool {
	g := &h.opts.Guard
	// The limiter first: a client guessing tokens is refused (429) once
	// its bucket is empty, like any other client.
	if g.Limiter != nil && !g.Limiter.Allow(access.ClientOf(r.RemoteAddr)) {
		w.Header().Set("Retry-After", "1")
		fail(w, http.StatusTooManyRequests, "rate limit exceeded for %s", access.ClientOf(r.RemoteAddr))
		return false
	}
	if g.Token != "" && !access.BearerOK(r, g.Token) {
		w.Header().Set("WWW-Authenticate", `Bearer realm="wirebench-kv"`)
		fail(w, http.StatusUnauthorized, "authentication required: send Authorization: Bearer <token>")
		return false
	}
	if strings.HasPrefix(r.URL.Path, "/kv/_repl/") && g.Repl != nil {
		g.Repl.ServeHTTP(w, r)
		return false
	}
	if g.ReadOnly != nil && g.ReadOnly() && isWrite(r) {
		fail(w, http.StatusForbidden, "READONLY You can't write against a read only replica.")
		return false
	}
	return true
}

// isWrite: PUT, DELETE and PATCH of a key, POST of mset.
func isWrite(r *http.Request) bool {
	rest, ok := kvRest(r) // as serveKV routes it: /%6Bv/mset is mset
	return isWriteReq(r.Method, rest, ok)
}

// isWriteReq is isWrite on both engines.
func isWriteReq(method, rest string, ok bool) bool {
	switch method {
	case http.MethodPut, http.MethodDelete, http.MethodPatch:
		return true
	case http.MethodPost:
		return ok && rest == "mset"
	}
	return false
}

// bearerOK is access.BearerOK on the Authorization header's value.
func bearerOK(auth, want string) bool {
	if want == "" {
		return true
	}
	const p = "Bearer "
	if len(auth) < len(p) || !strings.EqualFold(auth[:len(p)], p) {
		return false
	}
	return access.TokenOK(strings.TrimSpace(auth[len(p):]), want)
}
