package server

import (
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
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
	}), &http1, to, new(replyShares))
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

// TestPastReadDeadlineInConn: on the net/http engine's connections a read
// deadline already past, set while no Read is in progress, is kept in the
// connection (net/http's abort of its background read, once per request):
// the next Read fails with a timeout without consuming what the socket
// holds, and clearing the deadline restores reads. Set while a Read is
// blocked, it still reaches the socket and wakes the Read.
func TestPastReadDeadlineInConn(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	w := newHTTPWatchdog(ln, Timeouts{ReadHeader: time.Minute, Read: time.Minute, Write: time.Minute, Idle: time.Minute})
	defer w.Close()
	client, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer client.Close()
	nc, err := w.Accept()
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	c, ok := nc.(httpPhasedConn)
	if !ok {
		t.Fatalf("accepted %T, want httpPhasedConn", nc)
	}
	c.enter(phaseHandling) // as during a request: reads go straight to the socket
	readN := func(want string) {
		t.Helper()
		buf := make([]byte, len(want))
		if _, err := io.ReadFull(c, buf); err != nil || string(buf) != want {
			t.Fatalf("read %q, %v; want %q", buf, err, want)
		}
	}
	isTimeout := func(err error) bool {
		var ne net.Error
		return errors.Is(err, os.ErrDeadlineExceeded) && errors.As(err, &ne) && ne.Timeout()
	}

	if _, err := client.Write([]byte("abc")); err != nil {
		t.Fatal(err)
	}
	time.Sleep(50 * time.Millisecond) // the bytes are in the socket
	if err := c.SetReadDeadline(aLongTimeAgo); err != nil {
		t.Fatal(err)
	}
	if !c.readPast.Load() || c.read.Load() == forced {
		t.Fatalf("past deadline with no read in progress: readPast %v, socket forced %v; want it kept in the connection", c.readPast.Load(), c.read.Load() == forced)
	}
	for range 2 {
		if n, err := c.Read(make([]byte, 8)); n != 0 || !isTimeout(err) {
			t.Fatalf("read after a past deadline: %d, %v; want 0 and a timeout", n, err)
		}
	}
	if err := c.SetReadDeadline(time.Time{}); err != nil {
		t.Fatal(err)
	}
	readN("abc") // nothing was consumed

	// A later deadline replaces a past one too.
	if err := c.SetReadDeadline(aLongTimeAgo); err != nil {
		t.Fatal(err)
	}
	if err := c.SetReadDeadline(time.Now().Add(time.Hour)); err != nil {
		t.Fatal(err)
	}
	client.Write([]byte("d"))
	readN("d")

	// A Read blocked in the socket is woken by the socket's deadline.
	done := make(chan error, 1)
	go func() {
		_, err := c.Read(make([]byte, 8))
		done <- err
	}()
	for c.reading.Load() == 0 {
		time.Sleep(time.Millisecond)
	}
	time.Sleep(20 * time.Millisecond) // into the poller's wait
	if err := c.SetReadDeadline(aLongTimeAgo); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-done:
		if !isTimeout(err) {
			t.Fatalf("blocked read ended with %v, want a timeout", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("a past deadline did not wake a blocked read")
	}
	if err := c.SetReadDeadline(time.Time{}); err != nil {
		t.Fatal(err)
	}
	client.Write([]byte("e"))
	readN("e")
}
