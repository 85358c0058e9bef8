package httpapi_test

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"net"
	"net/http"
	"reflect"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/klauspost/compress/gzip"
	"github.com/klauspost/compress/zstd"

	"github.com/wirebench/wirebench/api"
	"github.com/wirebench/wirebench/codec"
	"github.com/wirebench/wirebench/httpapi"
	"github.com/wirebench/wirebench/internal/testkit"
	"github.com/wirebench/wirebench/server"
)

// Bounds per corpus case. Each case is one small request to a loopback
// server; the slowest (a 1 MiB body of a million nested values) takes a few
// milliseconds here, so 2 s only trips on a hang or a quadratic path, even
// on a noisy 2-core box. Allocation is bounded at 48 times the body limit:
// buffers for the wire body, the decoded body and the reply; the 1 GB
// that 4 M nested msgpack maps took is far past it.
const (
	corpusBody     = 1 << 20
	caseTime       = 2 * time.Second
	caseAllocBytes = 48 * corpusBody
)

func gz(b []byte) []byte {
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	zw.Write(b)
	zw.Close()
	return buf.Bytes()
}

var zstdEnc, _ = zstd.NewWriter(nil)

func zst(b []byte) []byte { return zstdEnc.EncodeAll(b, nil) }

// corpusServer is a server with a seeded store and a way to check, after
// every case, that the store is unchanged and the server answers.
type corpusServer struct {
	srv    *server.Server
	hc     *http.Client
	base   string
	users  []api.User
	todos  []api.Todo
	ran    int
	status map[int]int
}

func newCorpusServer(t *testing.T) *corpusServer {
	srv, err := server.Start(t.Context(), server.Options{HTTPAddr: "127.0.0.1:0", NoGRPC: true, SeedUsers: 5, SeedTodos: 5, Engine: engine,
		HTTP: httpapi.Options{MaxBody: corpusBody}, Timeouts: server.Timeouts{Read: 5 * time.Second, Write: 5 * time.Second}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Close() })
	return &corpusServer{srv: srv, base: "http://" + srv.HTTPAddr(), users: srv.Store.ListUsers(), todos: srv.Store.ListTodos(),
		hc: &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{DisableCompression: true}}, status: map[int]int{}}
}

// check runs after every case: the store is as seeded and the server
// answers a plain request.
func (cs *corpusServer) check(t *testing.T, name string) {
	t.Helper()
	if u, td := cs.srv.Store.ListUsers(), cs.srv.Store.ListTodos(); !reflect.DeepEqual(u, cs.users) || !reflect.DeepEqual(td, cs.todos) {
		t.Fatalf("%s changed the store:\nusers %+v\ntodos %+v", name, u, td)
	}
	resp, err := cs.hc.Get(cs.base + "/users/1")
	if err != nil {
		t.Fatalf("after %s the server does not answer: %v", name, err)
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Fatalf("after %s GET /users/1 is %d", name, resp.StatusCode)
	}
}

// send runs one case through an ordinary client and checks the status and
// the {error, code} body in the reply's format.
func (cs *corpusServer) send(t *testing.T, method, path string, h hostile, hdr ...string) {
	t.Helper()
	var m0, m1 runtime.MemStats
	runtime.ReadMemStats(&m0)
	start := time.Now()
	req, err := http.NewRequest(method, cs.base+path, bytes.NewReader(h.body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", h.ctype)
	if h.coding != "" {
		req.Header.Set("Content-Encoding", h.coding)
	}
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Set(hdr[i], hdr[i+1])
	}
	resp, err := cs.hc.Do(req)
	if err != nil {
		t.Fatalf("%s: %v", h.name, err)
	}
	body, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil {
		t.Fatalf("%s: reading the reply: %v", h.name, err)
	}
	d := time.Since(start)
	runtime.ReadMemStats(&m1)
	cs.ran++
	cs.status[resp.StatusCode]++
	if resp.StatusCode != h.status {
		t.Errorf("%s: status %d, want %d; body %.200q", h.name, resp.StatusCode, h.status, body)
	}
	checkErrorBody(t, h.name, resp.Header.Get("Content-Type"), body, h.codes)
	if testkit.Timing() && d > caseTime {
		t.Errorf("%s: took %v", h.name, d)
	}
	if a := m1.TotalAlloc - m0.TotalAlloc; a > caseAllocBytes {
		t.Errorf("%s: allocated %d MiB", h.name, a>>20)
	}
	cs.check(t, h.name)
}

// checkErrorBody decodes an error reply in its own format.
func checkErrorBody(t *testing.T, name, ctype string, body []byte, codes []string) {
	t.Helper()
	e, ok := codec.ForMediaType(ctype)
	if !ok {
		t.Errorf("%s: error reply of type %q", name, ctype)
		return
	}
	var ae api.Error
	if err := e.Codec.Unmarshal(body, &ae); err != nil {
		t.Errorf("%s: error reply %q does not decode as %s: %v", name, body, e.Codec.Name(), err)
		return
	}
	if ae.Error == "" || !slices.Contains(codes, ae.Code) {
		t.Errorf("%s: error body %+v, want code in %v", name, ae, codes)
	}
}

// TestAdversarialCorpus sends at least 100 hostile bodies per format to the
// routes that would change the store (POST /users, PUT /users/2), then
// the framing, coding and id cases. See hostile for the invariant that
// makes every case a failure.
func TestAdversarialCorpus(t *testing.T) {
	cs := newCorpusServer(t)
	for _, format := range []string{"json", "toon", "protobuf", "msgpack", "cbor"} {
		t.Run(format, func(t *testing.T) {
			e := codec.MustLookup(format)
			cases := corpus(t, format, corpusBody)
			if len(cases) < 100 {
				t.Fatalf("%d cases for %s, want at least 100", len(cases), format)
			}
			t.Logf("%d cases", len(cases))
			for i, h := range cases {
				h.ctype = e.MediaTypes[0]
				if i%2 == 0 {
					cs.send(t, "POST", "/users", h)
				} else {
					h.name += " (PUT)"
					cs.send(t, "PUT", "/users/2", h)
				}
			}
		})
	}
	t.Run("coding", func(t *testing.T) {
		valid := []byte(`{"name":"Ada","email":"no-at-sign-here"}`)
		for _, h := range []hostile{
			{name: "coding br", coding: "br", body: valid, status: 415},
			{name: "coding deflate", coding: "deflate", body: valid, status: 415},
			{name: "coding gzip, gzip", coding: "gzip, gzip", body: gz(gz(valid)), status: 415},
			{name: "coding compress", coding: "compress", body: valid, status: 415},
			{name: "empty gzip body", coding: "gzip", body: nil, status: 400},
			{name: "gzip then garbage", coding: "gzip", body: append(gz(valid), "garbage"...), status: 400},
			{name: "zstd skippable frame only", coding: "zstd", body: []byte{0x50, 0x2a, 0x4d, 0x18, 0, 0, 0, 0}, status: 400},
			{name: "zstd bad checksum", coding: "zstd", body: flipAt(zstdChecksum(valid), -1), status: 400},
			{name: "zstd window 2^41", coding: "zstd", body: []byte{0x28, 0xb5, 0x2f, 0xfd, 0x00, 0xf8, 0x09, 0, 0, '{'}, status: 413},
		} {
			h.ctype = "application/json"
			if h.status != 415 {
				h.codes = rejected
			} else {
				h.codes = []string{"unsupported_media_type"}
			}
			if h.status == 413 {
				h.codes = tooLarge
			}
			cs.send(t, "POST", "/users", h)
		}
		for _, ct := range []string{"application/json; charset=utf-16", "application/json; charset=latin1", "application/json; charset=\"utf-16le\"",
			"application/json;;", "application/json; charset", "text/plain", "application/jsonx", "", "application/x-www-form-urlencoded", "multipart/form-data; boundary=x",
			"*/*", "application/*", "application/json, text/toon"} {
			cs.send(t, "POST", "/users", hostile{name: "Content-Type " + ct, ctype: ct, body: []byte(`{"name":"A","email":"x"}`), status: 415, codes: []string{"unsupported_media_type"}})
		}
	})
	t.Run("ids", func(t *testing.T) {
		valid := &api.User{Name: "Eve", Email: "eve@example.com"} // valid: only the id can refuse it
		body, _ := codec.MustLookup("json").Codec.Marshal(valid)
		for _, id := range []string{"+1", "01", "-0", "+0", "1.0", "1e0", "0x1", "0b1", "1_0", "%2B1", "1%20", "%201", "%00", "1%00", "１", "9223372036854775808", "-9223372036854775809", "99999999999999999999999", "1,2", "1;2", "null", "true", "1a", "a1"} {
			for _, m := range []string{"GET", "PUT", "DELETE", "HEAD"} {
				h := hostile{name: m + " /users/" + id, ctype: "application/json", status: 404, codes: []string{"not_found"}}
				if m == "PUT" {
					h.body = body
				}
				if m == "HEAD" {
					cs.head(t, "/users/"+id, 404)
					continue
				}
				cs.send(t, m, "/users/"+id, h)
			}
		}
		// A trailing slash names no item: 404 for every method (an empty
		// id routed to the item would answer POST with 405).
		for _, p := range []string{"/users/", "/todos/"} {
			for _, m := range []string{"GET", "POST", "PUT", "DELETE"} {
				h := hostile{name: m + " " + p, ctype: "application/json", status: 404, codes: []string{"not_found"}}
				if m == "POST" || m == "PUT" {
					h.body = body
				}
				cs.send(t, m, p, h)
			}
		}
		for _, id := range []string{"nope", "00000000-0000-0000-0000-000000000000", strings.Repeat("a", 4000), "%00", "..", "%2e%2e"} {
			for _, m := range []string{"GET", "PUT", "DELETE"} {
				h := hostile{name: m + " /todos/" + id[:min(len(id), 40)], ctype: "application/json", status: 404, codes: []string{"not_found"}}
				if m == "PUT" {
					h.body = []byte(`{"text":"t"}`)
				}
				cs.send(t, m, "/todos/"+id, h)
			}
		}
	})
	t.Run("framing", func(t *testing.T) { framingCases(t, cs) })
	t.Logf("%d cases; statuses %v", cs.ran, cs.status)
}

func (cs *corpusServer) head(t *testing.T, path string, want int) {
	t.Helper()
	resp, err := cs.hc.Head(cs.base + path)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	cs.ran++
	cs.status[resp.StatusCode]++
	if resp.StatusCode != want {
		t.Errorf("HEAD %s: %d, want %d", path, resp.StatusCode, want)
	}
	cs.check(t, "HEAD "+path)
}

func zstdChecksum(b []byte) []byte {
	enc, _ := zstd.NewWriter(nil, zstd.WithEncoderCRC(true))
	return enc.EncodeAll(b, nil)
}

// framingCases write raw HTTP/1.1 requests. Requests that net/http refuses
// before any handler runs get its plain-text 400 (or 431/501) and a closed
// connection; those that reach the API get the {error, code} body.
func framingCases(t *testing.T, cs *corpusServer) {
	const user = `{"name":"A","email":"no-at-sign-here"}`
	post := "POST /users HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
	for _, tc := range []struct {
		name, raw string
		status    int
		api       bool // answered by our handler: an {error, code} body
	}{
		{"short body then close", post + "Content-Length: 100\r\n\r\n" + user, 400, true},
		{"Content-Length over the limit", post + fmt.Sprintf("Content-Length: %d\r\n\r\n", corpusBody+1) + user, 413, true},
		{"Content-Length 2^63-1", post + "Content-Length: 9223372036854775807\r\n\r\n", 413, true},
		{"Content-Length 2^64", post + "Content-Length: 18446744073709551616\r\n\r\n", 400, false},
		{"negative Content-Length", post + "Content-Length: -1\r\n\r\n", 400, false},
		{"two different Content-Lengths", post + "Content-Length: 5\r\nContent-Length: 6\r\n\r\n{}{}{}", 400, false},
		{"Content-Length and chunked", post + "Content-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n", 400, false},
		{"chunk size garbage", post + "Transfer-Encoding: chunked\r\n\r\nzz\r\n" + user + "\r\n0\r\n\r\n", 400, true},
		{"chunk size 2^64", post + "Transfer-Encoding: chunked\r\n\r\nffffffffffffffffff\r\n{\r\n0\r\n\r\n", 400, true},
		{"chunks over the limit", post + "Transfer-Encoding: chunked\r\n\r\n" + fmt.Sprintf("%x\r\n%s\r\n", corpusBody+1, strings.Repeat(" ", corpusBody+1)) + "0\r\n\r\n", 413, true},
		{"chunked, no last chunk", post + "Transfer-Encoding: chunked\r\n\r\n5\r\n{\"a\":\r\n", 400, true},
		{"transfer-coding gzip", post + "Transfer-Encoding: gzip\r\n\r\n", 501, false},
		{"headers over 64 KiB", "GET /users/1 HTTP/1.1\r\nHost: x\r\nX-Big: " + strings.Repeat("a", 70<<10) + "\r\n\r\n", 431, false},
		{"request line garbage", "GARBAGE\r\n\r\n", 400, false},
		{"HTTP/1.1 without Host", "GET /users/1 HTTP/1.1\r\n\r\n", 400, false},
		{"bare LF line ends", "POST /users HTTP/1.1\nHost: x\nContent-Type: application/json\nContent-Length: 2\n\n{}", 400, true},
		{"space before colon", "GET /users/1 HTTP/1.1\r\nHost : x\r\n\r\n", 400, false},
		{"NUL in a header", "GET /users/1 HTTP/1.1\r\nHost: x\r\nX-A: a\x00b\r\n\r\n", 400, false},
		{"version HTTP/9.9", "GET /users/1 HTTP/9.9\r\nHost: x\r\n\r\n", 505, false},
		{"absolute-form with a non-canonical id", "DELETE http://other.example/users/+1 HTTP/1.1\r\nHost: x\r\n\r\n", 404, true},
	} {
		rawCase(t, cs, tc.name, tc.raw, tc.status, tc.api)
	}
}

func rawCase(t *testing.T, cs *corpusServer, name, raw string, want int, apiBody bool) {
	t.Helper()
	start := time.Now()
	conn, err := net.Dial("tcp", cs.srv.HTTPAddr())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	conn.SetDeadline(time.Now().Add(caseTime + 3*time.Second))
	go func() { io.WriteString(conn, raw); conn.(*net.TCPConn).CloseWrite() }()
	if w, ok := framingByEngine[engine][name]; ok {
		want = w
	}
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if want == 0 && err != nil {
		cs.check(t, name) // closed without a reply, as expected on this engine
		return
	}
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	cs.ran++
	cs.status[resp.StatusCode]++
	if resp.StatusCode != want {
		t.Errorf("%s: %d %.200q, want %d", name, resp.StatusCode, body, want)
	}
	if apiBody && resp.StatusCode >= 400 {
		checkErrorBody(t, name, resp.Header.Get("Content-Type"), body, []string{"malformed", "too_large", "invalid_argument", "not_found"})
	}
	if d := time.Since(start); testkit.Timing() && d > caseTime {
		t.Errorf("%s: took %v", name, d)
	}
	cs.check(t, name)
}
