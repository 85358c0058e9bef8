package server_test

import (
	"context"
	"net/http"
	"testing"

	"github.com/wirebench/wirebench/server"
)

// TestKVGuardBothEngines: --auth-token guards /kv/ on both engines, and
// the fasthttp engine refuses replication streams (its adaptor would
// buffer them forever).
func TestKVGuardBothEngines(t *testing.T) {
	for _, engine := range []string{server.EngineNetHTTP, server.EngineFastHTTP} {
		srv, err := server.Start(context.Background(), server.Options{HTTPAddr: "127.0.0.1:0", NoGRPC: true, Engine: engine, AuthToken: "tok"})
		if err != nil {
			t.Fatal(err)
		}
		get := func(path, auth string) int {
			req, _ := http.NewRequest("GET", "http://"+srv.HTTPAddr()+path, nil)
			if auth != "" {
				req.Header.Set("Authorization", auth)
			}
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			return resp.StatusCode
		}
		if c := get("/kv/k", ""); c != http.StatusUnauthorized {
			t.Errorf("%s: GET /kv/k without the token: %d", engine, c)
		}
		if c := get("/kv/k", "Bearer tok"); c != http.StatusNotFound {
			t.Errorf("%s: GET /kv/k with the token: %d", engine, c)
		}
		want := http.StatusConflict // no snapshot taken yet: resync
		if engine == server.EngineFastHTTP {
			want = http.StatusNotImplemented
		}
		if c := get("/kv/_repl/stream?id=x&offset=0", "Bearer tok"); c != want {
			t.Errorf("%s: stream: %d, want %d", engine, c, want)
		}
		srv.Close()
	}
}
