package server

import (
	"fmt"
	"net"
	"net/http"
	"testing"
	"time"
)

// TestHandlingPhaseNotReadLimited: while a handler runs, the connection
// is in the write limit, not the read limits: net/http's background read
// stays blocked, so the request's context is not canceled when a
// handler outlasts the read-header and read timeouts.
func TestHandlingPhaseNotReadLimited(t *testing.T) {
	const read = 150 * time.Millisecond
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	to := Timeouts{ReadHeader: read, Read: read, Write: time.Minute, Idle: time.Minute}
	canceled := make(chan bool, 1)
	var http1 http.Protocols
	http1.SetHTTP1(true)
	hs, err := newPhasedHTTPServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-r.Context().Done():
			canceled <- true
		case <-time.After(4 * read):
			canceled <- false
		}
	}), &http1, to)
	if err != nil {
		t.Fatal(err)
	}
	go hs.Serve(newHTTPWatchdog(ln, to))
	defer hs.Close()
	c, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	fmt.Fprintf(c, "GET / HTTP/1.1\r\nHost: x\r\n\r\n")
	select {
	case got := <-canceled:
		if got {
			t.Errorf("request context canceled while its handler ran (%v read timeouts)", read)
		}
	case <-time.After(time.Minute):
		t.Fatal("handler never ran")
	}
}
