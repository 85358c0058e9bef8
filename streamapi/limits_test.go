package streamapi_test

import (
	"fmt"
	"io"
	"net"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/wirebench/wirebench/server"
)

// Readers that stop reading a long stream hold only the stream's buffer on
// the server, not the list, and are cut at the duration limit: the
// handler returns, its goroutine and buffers released.
func TestStalledReadersHoldLittleAndAreCut(t *testing.T) {
	if testing.Short() {
		t.Skip("seeds 100,000 users")
	}
	const users, clients = 100_000, 4
	const limit = time.Second
	srv := start(t, server.Options{SeedUsers: users, MaxStreamDuration: limit})
	srv.Store.ListUsers() // build the shared snapshot before measuring
	full := map[string]int{}
	for _, c := range []struct{ name, req string }{
		{"ndjson", "GET /users HTTP/1.1\r\nHost: x\r\nAccept: application/x-ndjson\r\n\r\n"},
		{"sse", "GET /users/events HTTP/1.1\r\nHost: x\r\n\r\n"},
		{"connect stream", "POST /wirebench.v1.UserService/Stream HTTP/1.1\r\nHost: x\r\nContent-Type: application/connect+proto\r\nContent-Length: 5\r\n\r\n\x00\x00\x00\x00\x00"},
	} {
		t.Run(c.name, func(t *testing.T) {
			runtime.GC()
			var before runtime.MemStats
			runtime.ReadMemStats(&before)
			conns := make([]net.Conn, clients)
			for i := range conns {
				conns[i] = stall(t, srv.HTTPAddr(), c.req)
			}
			time.Sleep(300 * time.Millisecond) // the writers fill the sockets and block
			runtime.GC()
			var during runtime.MemStats
			runtime.ReadMemStats(&during)
			grew := int64(during.HeapAlloc) - int64(before.HeapAlloc)
			// The whole stream, read by a client that reads (after the
			// measurement: its 10 MB would blur it).
			whole := rawRead(t, srv.HTTPAddr(), c.req, 0)
			if !strings.HasSuffix(whole, "\r\n0\r\n\r\n") {
				t.Fatalf("a reading client's stream (%d bytes) does not end with the last chunk", len(whole))
			}
			full[c.name] = len(whole)

			// Holding the encoded list would cost ~len(whole) per client
			// (over 7 MB); a stream holds its 16 KiB buffer and the
			// connection's (net/http: 4 KiB each way): measured 25 KiB
			// (NDJSON, SSE) to 800 KiB (Connect) per client. 2 MiB per
			// client is a generous bound for GC timing, far under the list.
			if grew > clients*2<<20 {
				t.Errorf("heap grew %d bytes with %d stalled readers of a %d-byte stream", grew, clients, len(whole))
			}
			t.Logf("%d stalled readers of a %d-byte stream: heap %+d bytes", clients, len(whole), grew)

			// Every stalled stream is still in its handler...
			if n := handlers(); n != clients {
				t.Fatalf("%d stream handlers running, want the %d stalled ones", n, clients)
			}
			// ...until the limit and its 1 s grace to write an end: then
			// each is cut and its goroutine and buffers are released.
			deadline := time.Now().Add(limit + time.Second + 10*time.Second) // generous for a busy box
			for handlers() > 0 {
				if time.Now().After(deadline) {
					t.Fatalf("%d handlers still writing to stalled readers after %v", handlers(), limit)
				}
				time.Sleep(50 * time.Millisecond)
			}
		})
	}
}

// handlers counts the goroutines serving a request of this package.
func handlers() int {
	buf := make([]byte, 8<<20)
	buf = buf[:runtime.Stack(buf, true)]
	return strings.Count(string(buf), "streamapi.(*Handler).ServeHTTP(")
}

func stall(t *testing.T, addr, req string) net.Conn {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	c.(*net.TCPConn).SetReadBuffer(4096) // a small window: the server's writes block
	t.Cleanup(func() { c.Close() })
	if _, err := io.WriteString(c, req); err != nil {
		t.Fatal(err)
	}
	return c
}

// rawRead sends req on a new connection and reads the whole response.
func rawRead(t *testing.T, addr, req string, _ int) string {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	req = strings.Replace(req, "Host: x\r\n", "Host: x\r\nConnection: close\r\n", 1)
	if _, err := io.WriteString(c, req); err != nil {
		t.Fatal(err)
	}
	c.SetReadDeadline(time.Now().Add(20 * time.Second))
	b, err := io.ReadAll(c)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func tail(b []byte) string {
	if len(b) > 16 {
		b = b[len(b)-16:]
	}
	return fmt.Sprintf("%q", b)
}
