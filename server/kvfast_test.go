package server

import (
	"context"
	"fmt"
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

// TestKVKeysOwned: a key written without escapes is the store's own copy,
// not a view of the engine's request buffer (reused by the next request).
// Through fasthttpadaptor every stored key became the last request's
// path: 50 PUTs left 50 keys all named alike, and GETs found nothing.
func TestKVKeysOwned(t *testing.T) {
	for _, engine := range []string{EngineNetHTTP, EngineFastHTTP} {
		srv, err := Start(context.Background(), Options{HTTPAddr: "127.0.0.1:0", NoGRPC: true, Engine: engine})
		if err != nil {
			t.Fatal(err)
		}
		base := "http://" + srv.HTTPAddr() + "/kv/"
		const n = 50
		for i := range n {
			req, _ := http.NewRequest("PUT", base+fmt.Sprintf("key:%012d", i), strings.NewReader(fmt.Sprint("v", i)))
			req.Header.Set("Content-Type", "application/octet-stream")
			res, err := http.DefaultClient.Do(req)
			if err != nil || res.StatusCode != 204 {
				t.Fatalf("%s PUT %d: %v %v", engine, i, res, err)
			}
			res.Body.Close()
		}
		for i := range n {
			k := fmt.Sprintf("key:%012d", i)
			if v, _, ok := srv.KV.Get(k); !ok || string(v) != fmt.Sprint("v", i) {
				t.Errorf("%s: store has %q for %s (found %v)", engine, v, k, ok)
			}
		}
		seen := map[string]bool{}
		srv.KV.Keys(func(k string) bool { seen[k] = true; return true })
		if len(seen) != n {
			t.Errorf("%s: %d distinct keys after %d PUTs", engine, len(seen), n)
		}
		srv.Close()
	}
}
