package server_test

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"testing"
	"time"

	"golang.org/x/net/http2"
	"golang.org/x/net/http2/hpack"

	"github.com/wirebench/wirebench/server"
)

// TestH2CKeepsItsOwnTimeouts: an h2c connection is not in HTTP/1's
// phases: quiet for longer than the read-header timeout after its
// preface, it still answers.
func TestH2CKeepsItsOwnTimeouts(t *testing.T) {
	srv := startAbuse(t, 1, server.Timeouts{ReadHeader: tick})
	h := dialH2(t, srv.HTTPAddr())
	time.Sleep(3 * tick)
	h.request(1, "GET", "/users/1", true)
	var status string
	dec := hpack.NewDecoder(4096, func(f hpack.HeaderField) {
		if f.Name == ":status" {
			status = f.Value
		}
	})
	h.frames(func(f http2.Frame) bool {
		if f, ok := f.(*http2.HeadersFrame); ok {
			dec.Write(f.HeaderBlockFragment())
			return true
		}
		return false
	})
	if status != "200" {
		t.Errorf("h2c GET after %v quiet: %q, want 200", 3*tick, status)
	}
}

// TestSlowHeadersKeepAlive: the read-header timeout also bounds the
// headers of a keep-alive connection's next request, from its first byte
// (not the idle timeout, which ends at that byte).
func TestSlowHeadersKeepAlive(t *testing.T) {
	srv := startAbuse(t, 1, server.Timeouts{ReadHeader: tick, Idle: time.Hour})
	conn := dialTCP(t, srv.HTTPAddr())
	br := bufio.NewReader(conn)
	fmt.Fprintf(conn, "GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n")
	resp, err := http.ReadResponse(br, nil)
	if err != nil {
		t.Fatal(err)
	}
	io.Copy(io.Discard, resp.Body)
	time.Sleep(2 * tick) // idle, within the idle timeout
	start := time.Now()
	io.WriteString(conn, "GET /users/1 HTTP/1.1\r\nHost: x\r\n") // and no end
	conn.SetReadDeadline(time.Now().Add(tick + slack))
	_, err = br.ReadByte()
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		t.Fatalf("unfinished headers: connection still open after %v, read-header timeout %v", time.Since(start), tick)
	}
	if d := time.Since(start); d < tick/2 {
		t.Errorf("closed after %v, before the read-header timeout %v", d, tick)
	}
}
