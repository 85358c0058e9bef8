package server

import (
	"context"
	"io"
	"net/http"
	"strings"
	"testing"
)

// TestKVOnBothEngines: /kv/ answers alike on net/http and fasthttp.
func TestKVOnBothEngines(t *testing.T) {
	for _, engine := range []string{EngineNetHTTP, EngineFastHTTP} {
		srv, err := Start(context.Background(), Options{HTTPAddr: "127.0.0.1:0", NoGRPC: true, Engine: engine})
		if err != nil {
			t.Fatal(err)
		}
		base := "http://" + srv.HTTPAddr() + "/kv/"
		req, _ := http.NewRequest("PUT", base+"a%2Fb", strings.NewReader("v1"))
		req.Header.Set("Content-Type", "application/octet-stream")
		res, err := http.DefaultClient.Do(req)
		if err != nil || res.StatusCode != 204 {
			t.Fatalf("%s PUT: %v %v", engine, res, err)
		}
		res.Body.Close()
		if v, _, ok := srv.KV.Get("a/b"); !ok || string(v) != "v1" {
			t.Fatalf("%s: store has %q", engine, v)
		}
		res, err = http.Get(base + "a%2Fb")
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(res.Body)
		res.Body.Close()
		if res.StatusCode != 200 || !strings.Contains(string(b), `"value":"v1"`) {
			t.Fatalf("%s GET: %d %s", engine, res.StatusCode, b)
		}
		res, _ = http.Get("http://" + srv.HTTPAddr() + "/users")
		if res.StatusCode != 200 {
			t.Fatalf("%s: /users behind /kv/: %d", engine, res.StatusCode)
		}
		res.Body.Close()
		srv.Close()
	}
}
