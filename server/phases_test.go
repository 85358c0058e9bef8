package server_test

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/wirebench/wirebench/httpapi"
	"github.com/wirebench/wirebench/server"
)

// startFast starts the fasthttp engine, whose timeouts run in phases
// (server/phases.go).
func startFast(t *testing.T, users int, to server.Timeouts, h httpapi.Options) *server.Server {
	t.Helper()
	srv, err := server.Start(context.Background(), server.Options{
		HTTPAddr: "127.0.0.1:0", NoGRPC: true, SeedUsers: users, Engine: server.EngineFastHTTP, Timeouts: to, HTTP: h,
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Close() })
	return srv
}

func getOn(t *testing.T, conn net.Conn, br *bufio.Reader, req string) int {
	t.Helper()
	if _, err := io.WriteString(conn, req); err != nil {
		t.Fatalf("writing %q: %v", strings.SplitN(req, "\r\n", 2)[0], err)
	}
	resp, err := http.ReadResponse(br, nil)
	if err != nil {
		t.Fatalf("reply to %q: %v", strings.SplitN(req, "\r\n", 2)[0], err)
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return resp.StatusCode
}

// TestFastHTTPHandlerTimeInWrite: a handler slower than the read-header
// timeout is answered (its time counts in the write timeout, as on
// net/http), not cut as if the request were still being read.
func TestFastHTTPHandlerTimeInWrite(t *testing.T) {
	srv := startFast(t, 1, server.Timeouts{ReadHeader: tick, Read: tick, Write: 30 * tick, Idle: 30 * tick},
		httpapi.Options{Delay: 3 * tick})
	conn := dialTCP(t, srv.HTTPAddr())
	conn.SetDeadline(time.Now().Add(10*tick + slack))
	if code := getOn(t, conn, bufio.NewReader(conn), "GET /users/1 HTTP/1.1\r\nHost: x\r\n\r\n"); code != http.StatusOK {
		t.Fatalf("status %d, want 200", code)
	}
}

// TestFastHTTPBodyDeadlineEnds: a request with a body gets the whole read
// timeout as an explicit deadline; once its handler runs that deadline is
// over, so a busy keep-alive connection is not cut a read timeout later.
func TestFastHTTPBodyDeadlineEnds(t *testing.T) {
	srv := startFast(t, 1, server.Timeouts{ReadHeader: tick, Read: 2 * tick, Write: 30 * tick, Idle: 30 * tick}, httpapi.Options{})
	conn := dialTCP(t, srv.HTTPAddr())
	br := bufio.NewReader(conn)
	body := `{"name":"Ada","email":"ada@example.com"}`
	post := fmt.Sprintf("POST /users HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n%s", len(body), body)
	if code := getOn(t, conn, br, post); code != http.StatusCreated {
		t.Fatalf("create: status %d, want 201", code)
	}
	for end := time.Now().Add(5 * tick); time.Now().Before(end); {
		if code := getOn(t, conn, br, "GET /users/1 HTTP/1.1\r\nHost: x\r\n\r\n"); code != http.StatusOK {
			t.Fatalf("get: status %d, want 200", code)
		}
		time.Sleep(tick / 4)
	}
}
