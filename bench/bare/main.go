// Command bare is the simplest hand-written server a user would compare
// wirebench serve with (issue 17's yardstick): net/http, the same 100
// seeded users in a map under a RWMutex, encoding/json straight to the
// ResponseWriter; no negotiation, no metrics, no limits. bench/engine-cpu.sh
// measures the server CPU per request of both against it.
package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"net"
	"net/http"
	"os"
	"strconv"
	"sync"

	"github.com/wirebench/wirebench/api"
	"github.com/wirebench/wirebench/store"
)

func main() {
	addr := flag.String("addr", "127.0.0.1:0", "listen `address`")
	n := flag.Int("users", 100, "seeded users, the same as wirebench serve's")
	flag.Parse()
	st := store.NewMemory(store.Options{})
	if err := st.Seed(*n, 0); err != nil {
		fmt.Fprintln(os.Stderr, "bare:", err)
		os.Exit(1)
	}
	var mu sync.RWMutex
	users := map[int64]api.User{}
	for _, u := range st.ListUsers() {
		users[u.ID] = u
	}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /users/{id}", func(w http.ResponseWriter, r *http.Request) {
		id, err := strconv.ParseInt(r.PathValue("id"), 10, 64)
		mu.RLock()
		u, ok := users[id]
		mu.RUnlock()
		if err != nil || !ok {
			http.Error(w, "not found", http.StatusNotFound)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(u)
	})
	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		fmt.Fprintln(os.Stderr, "bare:", err)
		os.Exit(1)
	}
	fmt.Printf("listening http=%s\n", ln.Addr())
	fmt.Fprintln(os.Stderr, "bare:", http.Serve(ln, mux))
	os.Exit(1)
}
