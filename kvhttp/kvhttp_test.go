package kvhttp

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/vmihailenco/msgpack/v5"
	"google.golang.org/protobuf/encoding/protowire"

	"github.com/wirebench/wirebench/kv"
	"github.com/wirebench/wirebench/kv/resp"
)

func setup(t *testing.T, maxBody int64) (*httptest.Server, *kv.Store) {
	t.Helper()
	st, err := kv.Open(kv.Options{})
	if err != nil {
		t.Fatal(err)
	}
	inner := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/metrics" {
			io.WriteString(w, "inner_metric 1\n")
			return
		}
		http.NotFound(w, r)
	})
	srv := httptest.NewServer(Mount(st, inner, Options{MaxBody: maxBody}))
	t.Cleanup(func() { srv.Close(); st.Close() })
	return srv, st
}

func do(t *testing.T, method, url, ctype, accept string, body []byte) (int, string, []byte) {
	t.Helper()
	req, _ := http.NewRequest(method, url, bytes.NewReader(body))
	if ctype != "" {
		req.Header.Set("Content-Type", ctype)
	}
	if accept != "" {
		req.Header.Set("Accept", accept)
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	return res.StatusCode, res.Header.Get("Content-Type"), b
}

func TestRawAndJSON(t *testing.T) {
	srv, st := setup(t, 1<<20)
	u := srv.URL + "/kv/"
	if c, _, _ := do(t, "PUT", u+"a%2Fb", mediaRaw, "", []byte("raw\x00bytes")); c != 204 {
		t.Fatalf("PUT raw: %d", c)
	}
	if v, _, _ := st.Get("a/b"); string(v) != "raw\x00bytes" {
		t.Fatalf("escaped key: store has %q", v)
	}
	c, ct, b := do(t, "GET", u+"a%2Fb", "", mediaRaw, nil)
	if c != 200 || ct != mediaRaw || string(b) != "raw\x00bytes" {
		t.Fatalf("GET raw: %d %s %q", c, ct, b)
	}
	c, _, b = do(t, "GET", u+"a%2Fb", "", "application/json", nil)
	var got struct {
		Key, Value string
		TTLMs      int64 `json:"ttl_ms"`
	}
	if err := json.Unmarshal(b, &got); c != 200 || err != nil || got.Key != "a/b" || got.Value != "raw\x00bytes" || got.TTLMs != 0 {
		t.Fatalf("GET json: %d %s %v", c, b, err)
	}
	if c, _, _ := do(t, "PUT", u+"j", "application/json", "", []byte(`{"value":"hello","ttl_ms":60000}`)); c != 204 {
		t.Fatalf("PUT json: %d", c)
	}
	_, _, b = do(t, "GET", u+"j", "", "", nil)
	json.Unmarshal(b, &got)
	if got.Value != "hello" || got.TTLMs <= 0 || got.TTLMs > 60000 {
		t.Fatalf("GET json ttl: %s", b)
	}
	if c, _, _ := do(t, "PUT", u+"t", mediaRaw+"; charset=x", "", []byte("v")); c != 204 {
		t.Fatalf("PUT raw with parameters: %d", c)
	}
	if c, _, _ := do(t, "PUT", srv.URL+"/kv/t?ttl_ms=1", mediaRaw, "", []byte("v")); c != 204 {
		t.Fatal("PUT ttl_ms")
	}
	time.Sleep(5 * time.Millisecond)
	if c, _, _ := do(t, "GET", u+"t", "", mediaRaw, nil); c != 404 {
		t.Fatalf("expired key: %d", c)
	}
	if c, _, _ := do(t, "DELETE", u+"j", "", "", nil); c != 204 {
		t.Fatalf("DELETE: %d", c)
	}
	if c, _, _ := do(t, "DELETE", u+"j", "", "", nil); c != 404 {
		t.Fatalf("DELETE absent: %d", c)
	}
	if c, _, _ := do(t, "GET", u+"j", "", "", nil); c != 404 {
		t.Fatalf("GET absent: %d", c)
	}
	// Errors and limits.
	for _, tc := range []struct {
		method, path, ctype, accept string
		body                        []byte
		want                        int
	}{
		{"PUT", "x", "text/unknown", "", []byte("v"), 415},
		{"PUT", "x", "application/json", "", []byte(`{"value":`), 400},
		{"PUT", "x", "application/json", "", []byte(`{"value":"v","ttl_ms":-1}`), 400},
		{"PUT", "x?ttl_ms=abc", mediaRaw, "", []byte("v"), 400},
		{"PUT", "x", mediaRaw, "", make([]byte, 1<<20+1), 413},
		{"PUT", "x", mediaRaw, "", make([]byte, 1<<20), 204}, // exactly the limit
		{"PUT", strings.Repeat("k", kv.MaxKeyLen+1), mediaRaw, "", []byte("v"), 400},
		{"PUT", strings.Repeat("k", kv.MaxKeyLen), mediaRaw, "", []byte("v"), 204},
		{"GET", "x", "", "text/unknown", nil, 406},
		{"POST", "x", "", "", nil, 405},
		{"GET", "keys?limit=0", "", "", nil, 400},
		{"GET", "keys?limit=100001", "", "", nil, 400},
		{"GET", "keys?limit=100000", "", "", nil, 200},
		{"POST", "mget", mediaRaw, "", []byte("x"), 415},
	} {
		if c, _, b := do(t, tc.method, u+tc.path, tc.ctype, tc.accept, tc.body); c != tc.want {
			t.Errorf("%s %s (%s): %d, want %d: %s", tc.method, tc.path, tc.ctype, c, tc.want, b)
		}
	}
}

func TestMGetMSetKeys(t *testing.T) {
	srv, _ := setup(t, 1<<20)
	u := srv.URL + "/kv/"
	body := `{"items":[{"key":"p1","value":"one"},{"key":"p2","value":"two","ttl_ms":100000},{"key":"q","value":""}]}`
	if c, _, b := do(t, "POST", u+"mset", "application/json", "", []byte(body)); c != 204 {
		t.Fatalf("mset: %d %s", c, b)
	}
	c, _, b := do(t, "POST", u+"mget", "application/json", "", []byte(`{"keys":["p1","nope","q","p2"]}`))
	if c != 200 || string(b) != `{"values":["one",null,"","two"]}` {
		t.Fatalf("mget: %d %s", c, b)
	}
	c, _, b = do(t, "GET", u+"keys?prefix=p&limit=1", "", "", nil)
	if c != 200 || string(b) != `{"keys":["p1"]}` {
		t.Fatalf("keys: %d %s", c, b)
	}
	c, _, b = do(t, "GET", u+"keys", "", "", nil)
	if c != 200 || string(b) != `{"keys":["p1","p2","q"]}` {
		t.Fatalf("keys: %d %s", c, b)
	}
	// A key named "keys" is reachable escaped.
	if c, _, _ := do(t, "PUT", u+"%6Beys", mediaRaw, "", []byte("k")); c != 204 {
		t.Fatal("PUT %6Beys")
	}
	if c, _, b := do(t, "GET", u+"%6Beys", "", mediaRaw, nil); c != 200 || string(b) != "k" {
		t.Fatalf("GET %%6Beys: %d %q", c, b)
	}
	// msgpack carries values as bytes.
	mp, _ := msgpack.Marshal(map[string]any{"keys": []string{"p1", "nope"}})
	c, ct, b := do(t, "POST", u+"mget", "application/msgpack", "", mp)
	var vals struct {
		Values [][]byte `msgpack:"values"`
	}
	if err := msgpack.Unmarshal(b, &vals); c != 200 || ct != "application/msgpack" || err != nil || string(vals.Values[0]) != "one" || vals.Values[1] != nil {
		t.Fatalf("mget msgpack: %d %s %v %q", c, ct, err, vals.Values)
	}
}

func TestFormats(t *testing.T) {
	srv, _ := setup(t, 1<<20)
	u := srv.URL + "/kv/"
	do(t, "PUT", u+"f", mediaRaw, "", []byte("v\xffal"))
	for _, mt := range []string{"application/json", "application/msgpack", "application/cbor", "application/x-protobuf", "text/toon"} {
		c, ct, b := do(t, "GET", u+"f", "", mt, nil)
		if c != 200 || ct != mt || len(b) == 0 {
			t.Errorf("GET as %s: %d %s %q", mt, c, ct, b)
		}
	}
	// protobuf PUT: field 2 is the value.
	var pb []byte
	pb = protowire.AppendTag(pb, 2, protowire.BytesType)
	pb = protowire.AppendBytes(pb, []byte("from-proto"))
	if c, _, b := do(t, "PUT", u+"p", "application/x-protobuf", "", pb); c != 204 {
		t.Fatalf("PUT protobuf: %d %s", c, b)
	}
	if _, _, b := do(t, "GET", u+"p", "", mediaRaw, nil); string(b) != "from-proto" {
		t.Fatalf("after protobuf PUT: %q", b)
	}
}

func TestMetricsAppended(t *testing.T) {
	srv, _ := setup(t, 1<<20)
	do(t, "PUT", srv.URL+"/kv/m", mediaRaw, "", []byte("v"))
	do(t, "GET", srv.URL+"/kv/m", "", mediaRaw, nil)
	req, _ := http.NewRequest("GET", srv.URL+"/metrics", nil)
	req.Header.Set("Accept-Encoding", "gzip")
	res, err := http.DefaultTransport.RoundTrip(req) // no transparent gunzip
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(res.Body)
	res.Body.Close()
	for _, want := range []string{"inner_metric 1\n", "wirebench_kv_keys 1\n", `wirebench_kv_ops_total{op="hit"} 1`} {
		if !strings.Contains(string(b), want) {
			t.Errorf("/metrics lacks %q:\n%s", want, b)
		}
	}
}

// TestHTTPAndRESPShareTheStore: a value written over HTTP is read over
// RESP, and one written over RESP is read over HTTP.
func TestHTTPAndRESPShareTheStore(t *testing.T) {
	srv, st := setup(t, 1<<20)
	rs, err := resp.Listen("127.0.0.1:0", st, resp.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer rs.Close()
	c, err := net.Dial("tcp", rs.Addr())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	br := bufio.NewReader(c)
	val := "bin\r\nary\x00"
	do(t, "PUT", srv.URL+"/kv/shared", mediaRaw, "", []byte(val))
	fmt.Fprintf(c, "*2\r\n$3\r\nGET\r\n$6\r\nshared\r\n")
	line, _ := br.ReadString('\n')
	if line != fmt.Sprintf("$%d\r\n", len(val)) {
		t.Fatalf("RESP GET header %q", line)
	}
	got := make([]byte, len(val)+2)
	io.ReadFull(br, got)
	if string(got[:len(val)]) != val {
		t.Fatalf("RESP GET %q, want %q", got, val)
	}
	fmt.Fprintf(c, "*3\r\n$3\r\nSET\r\n$4\r\nback\r\n$5\r\nfromR\r\n")
	if line, _ := br.ReadString('\n'); line != "+OK\r\n" {
		t.Fatalf("RESP SET: %q", line)
	}
	if code, _, b := do(t, "GET", srv.URL+"/kv/back", "", mediaRaw, nil); code != 200 || string(b) != "fromR" {
		t.Fatalf("HTTP GET after RESP SET: %d %q", code, b)
	}
}

// TestRawContentLength: a raw GET or HEAD has its value's length, never
// chunked coding, on both sides of net/http's buffer (netBuffered).
func TestRawContentLength(t *testing.T) {
	srv, st := setup(t, 1<<20)
	for _, n := range []int{0, 1, 128, netBuffered - 1, netBuffered, netBuffered + 1, 100000} {
		k := fmt.Sprint("len", n)
		st.Set(k, bytes.Repeat([]byte("x"), n), kv.SetOpts{})
		for _, m := range []string{"GET", "HEAD"} {
			req, _ := http.NewRequest(m, srv.URL+"/kv/"+k, nil)
			req.Header.Set("Accept", mediaRaw)
			res, err := http.DefaultTransport.RoundTrip(req)
			if err != nil {
				t.Fatal(err)
			}
			b, _ := io.ReadAll(res.Body)
			res.Body.Close()
			want := fmt.Sprint(n)
			if got := res.Header.Get("Content-Length"); got != want || len(res.TransferEncoding) != 0 || (m == "GET" && len(b) != n) {
				t.Errorf("%s of %d bytes: Content-Length %q, Transfer-Encoding %v, body %d bytes", m, n, got, res.TransferEncoding, len(b))
			}
		}
	}
}
