// Command bare is the simplest hand-written server a user would compare
// wirebench serve with (issue 17's yardstick): servercpu.BareHandler on
// net/http, or with -engine fasthttp servercpu.BareFastHandler (the
// fasthttp engine's floor), serving the same 100 seeded users.
// bench/engine-cpu.sh measures the server CPU per request of both engines
// against them.
package main

import (
	"flag"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/signal"
	"syscall"

	"github.com/valyala/fasthttp"

	"github.com/wirebench/wirebench/bench/servercpu"
	"github.com/wirebench/wirebench/store"
)

func main() {
	addr := flag.String("addr", "127.0.0.1:0", "listen `address`")
	n := flag.Int("users", 100, "seeded users, the same as wirebench serve's")
	engine := flag.String("engine", "nethttp", "`server`: nethttp (BareHandler) or fasthttp (BareFastHandler)")
	flag.Parse()
	if *engine != "nethttp" && *engine != "fasthttp" {
		fmt.Fprintf(os.Stderr, "bare: -engine %q: want nethttp or fasthttp\n", *engine)
		os.Exit(2)
	}
	st := store.NewMemory(store.Options{})
	if err := st.Seed(*n, 0); err != nil {
		fmt.Fprintln(os.Stderr, "bare:", err)
		os.Exit(1)
	}
	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		fmt.Fprintln(os.Stderr, "bare:", err)
		os.Exit(1)
	}
	// A clean exit on SIGINT or SIGTERM, so that a tool the server runs
	// under (valgrind's cachegrind, perf) writes its output.
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, os.Interrupt, syscall.SIGTERM)
	go func() { <-sig; os.Exit(0) }()
	fmt.Printf("listening http=%s\n", ln.Addr())
	if *engine == "fasthttp" {
		err = fasthttp.Serve(ln, servercpu.BareFastHandler(st.ListUsers()))
	} else {
		err = http.Serve(ln, servercpu.BareHandler(st.ListUsers()))
	}
	fmt.Fprintln(os.Stderr, "bare:", err)
	os.Exit(1)
}
