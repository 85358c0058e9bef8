// Package servercpu holds issue 17's yardsticks: the bare handlers a user
// would write instead of the reference server, on net/http and on
// fasthttp, and (in its tests) BenchmarkServerCPU, which measures the
// server CPU per request of `wirebench serve` against them.
package servercpu

import (
	"bytes"
	"encoding/json"
	"net/http"
	"strconv"
	"sync"

	"github.com/valyala/fasthttp"

	"github.com/wirebench/wirebench/api"
)

// users is the bare handlers' store: the users in a map under a RWMutex.
type users struct {
	mu   sync.RWMutex
	byID map[int64]api.User
}

func newUsers(list []api.User) *users {
	u := &users{byID: make(map[int64]api.User, len(list))}
	for _, v := range list {
		u.byID[v.ID] = v
	}
	return u
}

func (u *users) get(id int64) (api.User, bool) {
	u.mu.RLock()
	v, ok := u.byID[id]
	u.mu.RUnlock()
	return v, ok
}

// BareHandler is the simplest hand-written server of users: net/http's
// ServeMux, the users in a map under a RWMutex, encoding/json straight to
// the ResponseWriter; no negotiation, no metrics, no limits.
func BareHandler(list []api.User) http.Handler {
	us := newUsers(list)
	mux := http.NewServeMux()
	mux.HandleFunc("GET /users/{id}", func(w http.ResponseWriter, r *http.Request) {
		id, err := strconv.ParseInt(r.PathValue("id"), 10, 64)
		u, ok := us.get(id)
		if err != nil || !ok {
			http.Error(w, "not found", http.StatusNotFound)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(u)
	})
	return mux
}

// BareFastHandler is BareHandler as a fasthttp user writes it: the same
// map, encoding/json straight to the reply, fasthttp's default server
// (its Server and Date headers). It is the fasthttp engine's floor: what
// fasthttp itself costs per GET on this machine, below which no adapter
// on it can go (issue 17's fasthttp goal is measured against BareHandler).
func BareFastHandler(list []api.User) fasthttp.RequestHandler {
	us := newUsers(list)
	prefix := []byte("/users/")
	return func(ctx *fasthttp.RequestCtx) {
		rest, ok := bytes.CutPrefix(ctx.Path(), prefix)
		if !ok || !ctx.IsGet() {
			ctx.Error("not found", fasthttp.StatusNotFound)
			return
		}
		id, err := strconv.ParseInt(string(rest), 10, 64)
		u, ok := us.get(id)
		if err != nil || !ok {
			ctx.Error("not found", fasthttp.StatusNotFound)
			return
		}
		ctx.SetContentType("application/json")
		_ = json.NewEncoder(ctx).Encode(u)
	}
}
