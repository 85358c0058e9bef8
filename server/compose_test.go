package server_test

import (
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/wirebench/wirebench/bulk"
	"github.com/wirebench/wirebench/server"
)

func get(t *testing.T, method, url, ctype, accept, body string) (int, string) {
	t.Helper()
	req, _ := http.NewRequest(method, url, strings.NewReader(body))
	if ctype != "" {
		req.Header.Set("Content-Type", ctype)
	}
	if accept != "" {
		req.Header.Set("Accept", accept)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, url, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// Every face of the REST port answers through the one table of
// server.Start — bulk included, which serve used to wire itself — and a
// temporary bulk database is removed by Close.
func TestEveryFaceOnOneTable(t *testing.T) {
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp) // where the default bulk database goes
	srv, err := server.Start(context.Background(), server.Options{HTTPAddr: "127.0.0.1:0", GRPCAddr: "127.0.0.1:0", SeedUsers: 3})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	base := "http://" + srv.HTTPAddr()
	var airports strings.Builder
	bulk.Generate(&airports, bulk.FormatCSV, 5)
	for _, c := range []struct {
		method, path, ctype, accept, body string
		code                              int
		want                              string
	}{
		{"GET", "/users/1", "", "application/json", "", 200, `"id":1,`},
		{"GET", "/users", "", "application/x-ndjson", "", 200, "\n{\"id\":2,"},
		{"PUT", "/kv/a//b", "application/octet-stream", "", "v", 204, ""},
		{"GET", "/kv/a//b", "", "application/octet-stream", "", 200, "v"},
		{"GET", "/metrics", "", "", "", 200, "wirebench_kv_keys 1"},
		{"POST", "/airports", "text/csv", "", airports.String(), 200, `"inserted":5`},
		{"GET", "/bench/", "", "", "", 200, "<html"},
		{"POST", "/wirebench.v1.EchoService/Echo", "application/json", "", `{"firstMessage":"a","secondMessage":"b"}`, 200, `"message":"ab"`},
		{"GET", "/nope", "", "application/json", "", 404, `"code"`},
	} {
		code, body := get(t, c.method, base+c.path, c.ctype, c.accept, c.body)
		if code != c.code || !strings.Contains(body, c.want) {
			t.Errorf("%s %s: %d %.200q; want %d with %q", c.method, c.path, code, body, c.code, c.want)
		}
	}
	dbs, _ := filepath.Glob(filepath.Join(tmp, "wirebench-airports-*", "airports.db"))
	if len(dbs) != 1 {
		t.Fatalf("bulk databases %v: want one", dbs)
	}
	srv.Close()
	if _, err := os.Stat(filepath.Dir(dbs[0])); !os.IsNotExist(err) {
		t.Fatalf("temporary bulk database left after Close: %v", err)
	}
	if srv.Err() != nil {
		t.Fatalf("Err after Close: %v", srv.Err())
	}
}

type breakable struct {
	net.Listener
	broken chan struct{}
}

func (l *breakable) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		select {
		case <-l.broken:
			return nil, errors.New("accept: broken (test)")
		default:
		}
	}
	return c, err
}

// A listener that fails after Start closes Failed, and Err names it; on
// both REST engines and the gRPC port. Close is not a failure.
func TestListenerFailureSurfaces(t *testing.T) {
	for _, tc := range []struct {
		name, engine string
		which        int // the Listen call to break: HTTP first, then gRPC
	}{{"nethttp", server.EngineNetHTTP, 0}, {"fasthttp", server.EngineFastHTTP, 0}, {"grpc", "", 1}} {
		t.Run(tc.name, func(t *testing.T) {
			broken := make(chan struct{})
			var lns []*breakable
			o := server.Options{HTTPAddr: "127.0.0.1:0", GRPCAddr: "127.0.0.1:0", Engine: tc.engine,
				Listen: func(network, addr string) (net.Listener, error) {
					ln, err := net.Listen(network, addr)
					if err != nil {
						return nil, err
					}
					b := &breakable{Listener: ln, broken: make(chan struct{})}
					if len(lns) == tc.which {
						b.broken = broken
					}
					lns = append(lns, b)
					return b, nil
				}}
			srv, err := server.Start(context.Background(), o)
			if err != nil {
				t.Fatal(err)
			}
			defer srv.Close()
			select {
			case <-srv.Failed():
				t.Fatalf("failed before anything broke: %v", srv.Err())
			default:
			}
			close(broken)
			lns[tc.which].Listener.Close()
			select {
			case <-srv.Failed():
			case <-time.After(time.Minute):
				t.Fatal("a broken listener did not surface")
			}
			if err := srv.Err(); err == nil || !strings.Contains(err.Error(), "broken (test)") {
				t.Fatalf("Err = %v", err)
			}
		})
	}
}

// A start that fails after the bulk database opened closes it again.
func TestFailedStartClosesBulkDatabase(t *testing.T) {
	if _, err := os.Stat("/proc/self/fd"); err != nil {
		t.Skip("needs /proc/self/fd (Linux)")
	}
	path := filepath.Join(t.TempDir(), "a.db")
	_, err := server.Start(context.Background(), server.Options{HTTPAddr: "256.0.0.1:1", NoGRPC: true, Bulk: server.Bulk{SQLite: path}})
	if err == nil || !strings.Contains(err.Error(), "listen") {
		t.Fatalf("Start = %v, want a listen error", err)
	}
	if _, err := os.Stat(path); err != nil {
		t.Fatalf("the database was not opened first: %v", err)
	}
	fds, _ := os.ReadDir("/proc/self/fd")
	for _, fd := range fds {
		if l, _ := os.Readlink("/proc/self/fd/" + fd.Name()); strings.HasPrefix(l, path) {
			t.Fatalf("%s still open after the failed start", l)
		}
	}
}
