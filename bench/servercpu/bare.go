// Package servercpu holds issue 17's yardstick: the bare net/http handler
// a user would write instead of the reference server, and (in its tests)
// BenchmarkServerCPU, which measures the server CPU per request of
// `wirebench serve` against it.
package servercpu

import (
	"encoding/json"
	"net/http"
	"strconv"
	"sync"

	"github.com/wirebench/wirebench/api"
)

// BareHandler is the simplest hand-written server of users: net/http's
// ServeMux, the users in a map under a RWMutex, encoding/json straight to
// the ResponseWriter; no negotiation, no metrics, no limits.
func BareHandler(users []api.User) http.Handler {
	var mu sync.RWMutex
	byID := map[int64]api.User{}
	for _, u := range users {
		byID[u.ID] = u
	}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /users/{id}", func(w http.ResponseWriter, r *http.Request) {
		id, err := strconv.ParseInt(r.PathValue("id"), 10, 64)
		mu.RLock()
		u, ok := byID[id]
		mu.RUnlock()
		if err != nil || !ok {
			http.Error(w, "not found", http.StatusNotFound)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(u)
	})
	return mux
}
