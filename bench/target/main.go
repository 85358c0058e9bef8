// Command target is the trivial HTTP server that bench/wrk-vs-wirebench.sh
// loads: one short fixed response, so the cost measured is the client's
// and the server's HTTP handling, nothing else.
package main

import (
	"flag"
	"fmt"
	"net"
	"net/http"
	"os"
)

func main() {
	addr := flag.String("addr", "127.0.0.1:0", "listen `address`")
	flag.Parse()
	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		fmt.Fprintln(os.Stderr, "target:", err)
		os.Exit(1)
	}
	body := []byte("hello, wirebench\n")
	fmt.Printf("listening %s\n", ln.Addr())
	err = http.Serve(ln, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain")
		w.Write(body)
	}))
	fmt.Fprintln(os.Stderr, "target:", err)
	os.Exit(1)
}
