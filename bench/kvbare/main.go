// Command kvbare is the floor of raw /kv/ over HTTP on each engine: the
// simplest handler a user would write for PUT and GET /kv/{key} with raw
// values (a map under a lock, the value copied, 204 / 200 / 404), with no
// AOF, no negotiation, no guard and no limits. scripts/kv-http-raw.sh
// (BARE=1) runs it beside wirebench serve and redis-server: what the
// engine itself costs per request, which no handler of ours can go below.
package main

import (
	"bytes"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/signal"
	"strings"
	"sync"
	"syscall"

	"github.com/valyala/fasthttp"
)

type store struct {
	mu sync.RWMutex
	m  map[string][]byte
}

func (s *store) put(k string, v []byte) {
	s.mu.Lock()
	s.m[k] = v
	s.mu.Unlock()
}

func (s *store) get(k string) ([]byte, bool) {
	s.mu.RLock()
	v, ok := s.m[k]
	s.mu.RUnlock()
	return v, ok
}

func netHandler(s *store) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		k, ok := strings.CutPrefix(r.URL.Path, "/kv/")
		switch {
		case !ok:
			http.NotFound(w, r)
		case r.Method == http.MethodPut:
			v, err := io.ReadAll(r.Body)
			if err != nil {
				http.Error(w, err.Error(), http.StatusBadRequest)
				return
			}
			s.put(k, v)
			w.WriteHeader(http.StatusNoContent)
		case r.Method == http.MethodGet:
			v, ok := s.get(k)
			if !ok {
				http.NotFound(w, r)
				return
			}
			w.Header().Set("Content-Type", "application/octet-stream")
			w.Write(v)
		default:
			w.WriteHeader(http.StatusMethodNotAllowed)
		}
	})
}

func fastHandler(s *store) fasthttp.RequestHandler {
	return func(ctx *fasthttp.RequestCtx) {
		p := ctx.Path()
		if !bytes.HasPrefix(p, []byte("/kv/")) {
			ctx.NotFound()
			return
		}
		switch {
		case ctx.IsPut():
			s.put(string(p[4:]), bytes.Clone(ctx.PostBody()))
			ctx.SetStatusCode(fasthttp.StatusNoContent)
		case ctx.IsGet():
			v, ok := s.get(string(p[4:])) // no allocation: the compiler looks up without copying
			if !ok {
				ctx.NotFound()
				return
			}
			ctx.SetContentType("application/octet-stream")
			ctx.SetBody(v)
		default:
			ctx.SetStatusCode(fasthttp.StatusMethodNotAllowed)
		}
	}
}

func main() {
	addr := flag.String("addr", "127.0.0.1:0", "listen `address`")
	engine := flag.String("engine", "nethttp", "`server`: nethttp or fasthttp")
	flag.Parse()
	if *engine != "nethttp" && *engine != "fasthttp" {
		fmt.Fprintf(os.Stderr, "kvbare: -engine %q: want nethttp or fasthttp\n", *engine)
		os.Exit(2)
	}
	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		fmt.Fprintln(os.Stderr, "kvbare:", err)
		os.Exit(1)
	}
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, os.Interrupt, syscall.SIGTERM)
	go func() { <-sig; os.Exit(0) }()
	fmt.Printf("listening http=%s\n", ln.Addr())
	s := &store{m: map[string][]byte{}}
	if *engine == "fasthttp" {
		err = (&fasthttp.Server{Handler: fastHandler(s), NoDefaultServerHeader: true}).Serve(ln)
	} else {
		err = http.Serve(ln, netHandler(s))
	}
	fmt.Fprintln(os.Stderr, "kvbare:", err)
	os.Exit(1)
}
