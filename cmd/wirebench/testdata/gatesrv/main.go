// Command gatesrv is the regression gate's end-to-end test server: it
// answers every GET with "ok" after spinning the CPU for burn (cost.go),
// the per-request cost the test plants in one revision and not another.
package main

import (
	"flag"
	"fmt"
	"net"
	"net/http"
	"os"
	"time"
)

func main() {
	addr := flag.String("addr", "127.0.0.1:0", "listen address")
	flag.Parse()
	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	err = http.Serve(ln, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		spins := 0
		for start := time.Now(); time.Since(start) < burn; {
			spins++
		}
		w.Header().Set("Content-Type", "text/plain")
		fmt.Fprintf(w, "ok %d\n", spins&1)
	}))
	fmt.Fprintln(os.Stderr, err)
	os.Exit(1)
}
