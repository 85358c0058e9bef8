package httpapi_test

import (
	"fmt"
	"net"
	"runtime"
	"testing"
	"time"

	"github.com/wirebench/wirebench/server"
)

// TestRouteEdges: a path that ends in a slash after a collection is not an
// item route — every method is a 404, never the item route's 405 — and a
// reply that sheds nothing carries no Retry-After.
func TestRouteEdges(t *testing.T) {
	_, c := start(t, server.Options{SeedUsers: 3})
	for _, m := range []string{"GET", "POST", "PUT", "DELETE"} {
		for _, p := range []string{"/users/", "/todos/"} {
			if r := c.do(m, p, nil, nil, nil); r.status != 404 {
				t.Errorf("%s %s: %d, want 404", m, p, r.status)
			}
		}
	}
	r := c.do("GET", "/users/1", nil, nil, nil)
	if _, ok := r.header["Retry-After"]; ok || r.status != 200 {
		t.Errorf("GET /users/1: %d with Retry-After %q: want 200 and none", r.status, r.header.Get("Retry-After"))
	}
}

// TestSlowBodiesHoldNoEncodingSlot: requests whose bodies are still
// arriving must not hold the encoding slots (max(2, GOMAXPROCS)), or a few
// slow uploads would stall every GET. More stalled POSTs than slots are
// opened, then a GET must still be answered.
func TestSlowBodiesHoldNoEncodingSlot(t *testing.T) {
	srv, c := start(t, server.Options{SeedUsers: 3})
	n := max(2, runtime.GOMAXPROCS(0)) + 2
	for range n {
		conn, err := net.Dial("tcp", srv.HTTPAddr())
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { conn.Close() })
		// Headers and the first byte of a 100-byte body; the rest never comes.
		fmt.Fprintf(conn, "POST /users HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{")
	}
	time.Sleep(100 * time.Millisecond) // let the server start reading them
	done := make(chan reply, 1)
	go func() { done <- c.do("GET", "/users/1", nil, nil, nil) }()
	select {
	case r := <-done:
		if r.status != 200 {
			t.Fatalf("GET beside %d stalled POSTs: %d", n, r.status)
		}
	case <-time.After(5 * time.Second): // a GET takes ms; a held slot blocks it until the read timeout (30 s)
		t.Fatalf("GET blocked by %d stalled POST bodies: they hold encoding slots", n)
	}
}
