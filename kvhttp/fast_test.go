package kvhttp

import (
	"bufio"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"sync/atomic"
	"testing"

	"github.com/valyala/fasthttp"

	"github.com/wirebench/wirebench/kv"
)

// failingFile is the AOF's file, refusing writes once fail is set.
type failingFile struct {
	*os.File
	fail *atomic.Bool
}

func (f failingFile) Write(b []byte) (int, error) {
	if f.fail.Load() {
		return 0, errors.New("injected write failure")
	}
	return f.File.Write(b)
}

// TestFastRefusedDeleteKeepsItsKey: a DELETE the AOF refuses is undone
// in memory, putting the key back: the key put back must be the store's
// own string, not a view of the request that fasthttp reuses for the
// next one on the connection (as a PUT's key must be, TestKVKeysOwned).
func TestFastRefusedDeleteKeepsItsKey(t *testing.T) {
	var fail atomic.Bool
	st, err := kv.Open(kv.Options{Dir: t.TempDir(), Fsync: kv.FsyncEverySec, OpenFile: func(path string) (kv.File, error) {
		f, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
		return failingFile{f, &fail}, err
	}})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	fs := &fasthttp.Server{Handler: MountFast(st, func(ctx *fasthttp.RequestCtx) { ctx.NotFound() }, Options{MaxBody: 1 << 20}), Logger: quiet{}}
	go fs.Serve(ln)
	defer fs.Shutdown()
	c, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	br := bufio.NewReader(c)
	send := func(method, path string, body string) int {
		t.Helper()
		fmt.Fprintf(c, "%s %s HTTP/1.1\r\nHost: kv\r\nContent-Type: application/octet-stream\r\nContent-Length: %d\r\n\r\n%s", method, path, len(body), body)
		res, err := http.ReadResponse(br, &http.Request{Method: method})
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		return res.StatusCode
	}
	if c := send("PUT", "/kv/doomed", "v"); c != 204 {
		t.Fatalf("PUT: %d", c)
	}
	fail.Store(true)
	if c := send("DELETE", "/kv/doomed", ""); c != http.StatusServiceUnavailable {
		t.Fatalf("DELETE with the AOF failing: %d, want 503", c)
	}
	send("GET", "/kv/xxxxxx", "") // same length: overwrites the request buffer in place
	send("GET", "/kv/yyyyyy", "")
	if v, _, ok := st.Get("doomed"); !ok || string(v) != "v" {
		t.Errorf("after the refused DELETE: %q %v, want the key back", v, ok)
	}
	n := 0
	st.Keys(func(k string) bool {
		n++
		if k != "doomed" {
			t.Errorf("the store holds key %q", k)
		}
		return true
	})
	if n != 1 {
		t.Errorf("%d keys, want 1", n)
	}
}
