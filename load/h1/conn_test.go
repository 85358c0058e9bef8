package h1

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/wirebench/wirebench/measure"
)

// bodyOf is the body the test server sends for size n: a pattern that
// differs by size, so a buffer shared by mistake shows as wrong bytes.
func bodyOf(n int) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte('a' + (i+n)%26)
	}
	return b
}

// TestConnsSharePooledBuffersSafely: connections at once read bodies from
// 10 bytes to 300 KB (past the 2-KiB first read, the 32-KiB reader and
// keepBody) through the shared readers and body buffers; every body is
// the server's, byte for byte, and between requests a connection holds
// no reader, and no body buffer over keepBody once released (or once its
// next request starts).
func TestConnsSharePooledBuffersSafely(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n, _ := strconv.Atoi(r.URL.Query().Get("n"))
		w.Write(bodyOf(n))
	}))
	defer srv.Close()
	addr := srv.Listener.Addr().String()
	sizes := []int{10, 1500, 2048, 2049, 5000, 40_000, 16 << 10, 16<<10 + 1, 100_000, 300_000, 700}
	const conns, rounds = 16, 6
	var wire measure.Bytes
	var wg sync.WaitGroup
	errs := make(chan error, conns)
	for c := range conns {
		wg.Add(1)
		go func() {
			defer wg.Done()
			conn := NewConn(addr, &wire, 30*time.Second, true)
			defer conn.Close()
			for r := range rounds {
				for i := range sizes {
					n := sizes[(i+c+r)%len(sizes)]
					req := AppendRequest(nil, "GET", "/?n="+strconv.Itoa(n), addr, nil, nil, true)
					resp, err := conn.RoundTrip(context.Background(), req, false, false)
					if err != nil {
						errs <- fmt.Errorf("conn %d, %d bytes: %v", c, n, err)
						return
					}
					if resp.Status != 200 || !bytes.Equal(resp.Body, bodyOf(n)) {
						errs <- fmt.Errorf("conn %d: status %d, body of %d bytes differs from the server's %d", c, resp.Status, len(resp.Body), n)
						return
					}
					if conn.br != nil {
						errs <- fmt.Errorf("conn %d: holds a reader between requests", c)
						return
					}
					if r%2 == 1 { // done with the response: the body goes back now
						conn.Release()
						if cap(conn.body) > keepBody || (n > keepBody && resp.Body != nil) {
							errs <- fmt.Errorf("conn %d keeps a body buffer of %d bytes after Release", c, cap(conn.body))
							return
						}
					}
				}
			}
			// A small request gives the last large body back.
			if _, err := conn.RoundTrip(context.Background(), AppendRequest(nil, "GET", "/?n=10", addr, nil, nil, true), false, false); err != nil {
				errs <- err
				return
			}
			if cap(conn.body) > keepBody {
				errs <- fmt.Errorf("conn %d keeps a body buffer of %d bytes after a small response", c, cap(conn.body))
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}

// TestExtraBytesStayWithTheirConnection: a server that sends a second
// response unasked leaves bytes buffered after the first; the connection
// keeps its reader for them rather than giving it back with them in it.
func TestExtraBytesStayWithTheirConnection(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		c, err := ln.Accept()
		if err != nil {
			return
		}
		defer c.Close()
		buf := make([]byte, 4096)
		c.Read(buf)
		c.Write([]byte("HTTP/1.1 200 OK\r\nContent-Length: 3\r\n\r\noneHTTP/1.1 200 OK\r\nContent-Length: 3\r\n\r\ntwo"))
		c.Read(buf) // the second request: its answer was sent already
		time.Sleep(100 * time.Millisecond)
	}()
	conn := NewConn(ln.Addr().String(), new(measure.Bytes), 10*time.Second, true)
	defer conn.Close()
	req := AppendRequest(nil, "GET", "/", "x", nil, nil, true)
	for _, want := range []string{"one", "two"} {
		resp, err := conn.RoundTrip(context.Background(), req, false, false)
		if err != nil {
			t.Fatal(err)
		}
		if string(resp.Body) != want {
			t.Fatalf("body %q, want %q", resp.Body, want)
		}
		if want == "one" && conn.br == nil {
			t.Fatal("the reader went back to the pool with the next response in it")
		}
	}
}
