package httpapi_test

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/klauspost/compress/gzip"
	"github.com/klauspost/compress/zstd"

	"github.com/wirebench/wirebench/api"
	"github.com/wirebench/wirebench/codec"
	"github.com/wirebench/wirebench/httpapi"
	"github.com/wirebench/wirebench/server"
)

// start runs the whole service on free loopback ports.
func start(t *testing.T, opts server.Options) (*server.Server, *client) {
	t.Helper()
	opts.HTTPAddr, opts.GRPCAddr, opts.NoGRPC, opts.Engine = "127.0.0.1:0", "127.0.0.1:0", true, engine
	srv, err := server.Start(context.Background(), opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Close() })
	return srv, &client{t: t, base: "http://" + srv.HTTPAddr(), hc: &http.Client{Timeout: 10 * time.Second}}
}

// formats are the wire formats under test: one per canonical media type.
func formats(t *testing.T) []codec.Entry {
	var out []codec.Entry
	for _, name := range codec.Formats() {
		out = append(out, codec.MustLookup(name))
	}
	if len(out) < 4 {
		t.Fatalf("only %d formats registered: %v", len(out), codec.Formats())
	}
	return out
}

type client struct {
	t    *testing.T
	base string
	hc   *http.Client
}

type reply struct {
	status int
	header http.Header
	body   []byte
}

// do sends body encoded with in (raw when body is []byte) and asks for out.
func (c *client) do(method, path string, in, out *codec.Entry, body any, hdr ...string) reply {
	c.t.Helper()
	var rd io.Reader
	if body != nil {
		data, ok := body.([]byte)
		if !ok {
			var err error
			if data, err = in.Codec.Marshal(body); err != nil {
				c.t.Fatalf("encode request: %v", err)
			}
		}
		rd = bytes.NewReader(data)
	}
	req, err := http.NewRequest(method, c.base+path, rd)
	if err != nil {
		c.t.Fatal(err)
	}
	if in != nil {
		req.Header.Set("Content-Type", in.MediaTypes[0])
	}
	if out != nil {
		req.Header.Set("Accept", out.MediaTypes[0])
	}
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Set(hdr[i], hdr[i+1])
	}
	resp, err := c.hc.Do(req)
	if err != nil {
		c.t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		c.t.Fatal(err)
	}
	return reply{resp.StatusCode, resp.Header, data}
}

// decode checks the reply's status and Content-Type and decodes it into v.
func (r reply) decode(t *testing.T, want int, format *codec.Entry, v any) {
	t.Helper()
	if r.status != want {
		t.Fatalf("status %d, want %d; body %q", r.status, want, r.body)
	}
	if ct := r.header.Get("Content-Type"); ct != format.MediaTypes[0] {
		t.Fatalf("Content-Type %q, want %q", ct, format.MediaTypes[0])
	}
	if err := format.Codec.Unmarshal(r.body, v); err != nil {
		t.Fatalf("decode %s reply %q: %v", format.Codec.Name(), r.body, err)
	}
}

func sameUser(t *testing.T, got, want api.User) {
	t.Helper()
	if got.ID != want.ID || got.Name != want.Name || got.Email != want.Email || !got.CreatedAt.Equal(want.CreatedAt) {
		t.Fatalf("user differs:\n got %+v\nwant %+v", got, want)
	}
}

// TestEveryFormatPair writes in format A and reads in format B, over every
// route, for every pair of formats.
func TestEveryFormatPair(t *testing.T) {
	srv, c := start(t, server.Options{SeedUsers: 5, SeedTodos: 5})
	fs := formats(t)
	pairs := 0
	for i := range fs {
		for j := range fs {
			a, b := &fs[i], &fs[j]
			t.Run(a.Codec.Name()+"→"+b.Codec.Name(), func(t *testing.T) {
				pairs++
				var created, got, updated api.User
				c.do("POST", "/users", a, a, &api.User{Name: "Ada " + a.Codec.Name(), Email: "ada@example.com"}).decode(t, 201, a, &created)
				if created.ID <= 5 || created.CreatedAt.IsZero() {
					t.Fatalf("server did not assign id/created_at: %+v", created)
				}
				c.do("GET", fmt.Sprint("/users/", created.ID), nil, b, nil).decode(t, 200, b, &got)
				sameUser(t, got, created)
				stored, _ := srv.Store.GetUser(created.ID)
				sameUser(t, got, stored) // nanoseconds survived both formats

				c.do("PUT", fmt.Sprint("/users/", created.ID), a, b, &api.User{Name: "Ada L", Email: "ada@l.org"}).decode(t, 200, b, &updated)
				sameUser(t, updated, api.User{ID: created.ID, Name: "Ada L", Email: "ada@l.org", CreatedAt: created.CreatedAt})

				var list api.UserList
				c.do("GET", "/users", nil, b, nil).decode(t, 200, b, &list)
				if n := len(list.Users); n != 6 || list.Users[5].ID != created.ID {
					t.Fatalf("list has %d users, last %+v", n, list.Users[n-1])
				}
				sameUser(t, list.Users[5], updated)

				if r := c.do("DELETE", fmt.Sprint("/users/", created.ID), nil, b, nil); r.status != 204 || len(r.body) != 0 {
					t.Fatalf("DELETE: %d %q", r.status, r.body)
				}
				var e api.Error
				c.do("GET", fmt.Sprint("/users/", created.ID), nil, b, nil).decode(t, 404, b, &e)
				if e.Code != "not_found" || e.Error == "" {
					t.Fatalf("404 body %+v", e)
				}

				var todo, gotTodo, updTodo api.Todo
				c.do("POST", "/todos", a, a, &api.Todo{Text: "Buy milk ✓", Done: true}).decode(t, 201, a, &todo)
				if len(todo.ID) != 36 || todo.Text != "Buy milk ✓" || !todo.Done {
					t.Fatalf("created todo %+v", todo)
				}
				c.do("GET", "/todos/"+todo.ID, nil, b, nil).decode(t, 200, b, &gotTodo)
				if gotTodo != todo {
					t.Fatalf("todo read back %+v, want %+v", gotTodo, todo)
				}
				c.do("PUT", "/todos/"+todo.ID, a, b, &api.Todo{Text: "Buy oat milk"}).decode(t, 200, b, &updTodo)
				if updTodo != (api.Todo{ID: todo.ID, Text: "Buy oat milk"}) {
					t.Fatalf("updated todo %+v", updTodo)
				}
				var todos api.TodoList
				c.do("GET", "/todos", nil, b, nil).decode(t, 200, b, &todos)
				if len(todos.Todos) != 6 {
					t.Fatalf("todo list has %d", len(todos.Todos))
				}
				if r := c.do("DELETE", "/todos/"+todo.ID, nil, b, nil); r.status != 204 {
					t.Fatalf("DELETE todo: %d %q", r.status, r.body)
				}

				var echo api.EchoResponse
				c.do("POST", "/echo", a, b, &api.EchoRequest{FirstMessage: "Hello, ", SecondMessage: a.Codec.Name()}).decode(t, 200, b, &echo)
				if echo.Message != "Hello, "+a.Codec.Name() {
					t.Fatalf("echo %+v", echo)
				}
			})
		}
	}
	if pairs != len(fs)*len(fs) {
		t.Fatalf("ran %d pairs, want %d", pairs, len(fs)*len(fs))
	}
	if u, td := srv.Store.Len(); u != 5 || td != 5 {
		t.Fatalf("dataset changed size: %d users, %d todos", u, td)
	}
}

// TestDatasetIdenticalInEveryFormat lists the seeded dataset in every format
// from two servers: the bytes are identical across servers, and every
// format decodes to the same values.
func TestDatasetIdenticalInEveryFormat(t *testing.T) {
	_, c1 := start(t, server.Options{SeedUsers: 100, SeedTodos: 100})
	_, c2 := start(t, server.Options{SeedUsers: 100, SeedTodos: 100})
	var refUsers api.UserList
	var refTodos api.TodoList
	for i, f := range formats(t) {
		r1, r2 := c1.do("GET", "/users", nil, &f, nil), c2.do("GET", "/users", nil, &f, nil)
		if !bytes.Equal(r1.body, r2.body) {
			t.Errorf("%s: list differs between two servers with the same seed", f.Codec.Name())
		}
		var users api.UserList
		r1.decode(t, 200, &f, &users)
		var todos api.TodoList
		c1.do("GET", "/todos", nil, &f, nil).decode(t, 200, &f, &todos)
		if len(users.Users) != 100 || len(todos.Todos) != 100 {
			t.Fatalf("%s: %d users, %d todos", f.Codec.Name(), len(users.Users), len(todos.Todos))
		}
		if i == 0 {
			refUsers, refTodos = users, todos
			continue
		}
		for k := range users.Users {
			sameUser(t, users.Users[k], refUsers.Users[k])
		}
		if !reflect.DeepEqual(todos, refTodos) {
			t.Errorf("%s: todos differ from %s", f.Codec.Name(), codec.Formats()[0])
		}
	}
}

// TestErrors checks every error status, its body in the negotiated format,
// and that the store is unchanged afterwards.
func TestErrors(t *testing.T) {
	const limit = 4096
	srv, c := start(t, server.Options{SeedUsers: 3, SeedTodos: 3, HTTP: httpapi.Options{MaxBody: limit}})
	json, msgpack := codec.MustLookup("json"), codec.MustLookup("msgpack")
	before := c.do("GET", "/users", nil, &json, nil).body
	beforeTodos := c.do("GET", "/todos", nil, &json, nil).body
	big := &api.User{Name: "x", Email: "a@b.co"}
	big.Name = strings.Repeat("n", limit)
	bomb := gzipBytes(t, []byte(`{"name":"`+strings.Repeat("a", 4*limit)+`","email":"a@b.co"}`))
	if len(bomb) >= limit {
		t.Fatalf("bomb is %d bytes, must fit the wire limit", len(bomb))
	}
	ct := func(v string) []string { return []string{"Content-Type", v} }
	cases := []struct {
		name, method, path string
		in, out            *codec.Entry
		body               any
		hdr                []string
		status             int
		code               string
		errFormat          *codec.Entry
	}{
		{"unknown id", "GET", "/users/999", nil, &msgpack, nil, nil, 404, "not_found", &msgpack},
		{"non-numeric id", "GET", "/users/abc", nil, nil, nil, nil, 404, "not_found", &json},
		{"unknown todo", "DELETE", "/todos/nope", nil, nil, nil, nil, 404, "not_found", &json},
		{"unknown route", "GET", "/nope", nil, &msgpack, nil, nil, 404, "not_found", &msgpack},
		{"wrong method", "PATCH", "/users/1", nil, &msgpack, nil, nil, 405, "method_not_allowed", &msgpack},
		{"wrong method on list", "DELETE", "/users", nil, nil, nil, nil, 405, "method_not_allowed", &json},
		{"malformed json", "POST", "/users", &json, nil, []byte(`{"name":`), nil, 400, "malformed", &json},
		{"malformed msgpack", "POST", "/users", &msgpack, nil, []byte{0xc1, 0xff}, nil, 400, "malformed", &msgpack},
		{"wrong type", "POST", "/users", &json, nil, []byte(`{"name":42,"email":"a@b.co"}`), nil, 400, "malformed", &json},
		{"invalid email", "POST", "/users", &json, nil, &api.User{Name: "x", Email: "nope"}, nil, 400, "invalid_argument", &json},
		{"invalid put", "PUT", "/users/1", &msgpack, nil, &api.User{Name: "", Email: "a@b.co"}, nil, 400, "invalid_argument", &msgpack},
		{"blank todo", "POST", "/todos", &json, nil, &api.Todo{Text: ""}, nil, 400, "invalid_argument", &json},
		{"too large", "POST", "/users", &json, nil, big, nil, 413, "too_large", &json},
		{"too large put", "PUT", "/users/2", &json, nil, big, nil, 413, "too_large", &json},
		{"gzip bomb", "POST", "/users", &json, nil, bomb, []string{"Content-Encoding", "gzip"}, 413, "too_large", &json},
		{"zstd bomb", "POST", "/users", &json, nil, zstdBytes(t, []byte(`{"name":"`+strings.Repeat("a", 4*limit)+`","email":"a@b.co"}`)), []string{"Content-Encoding", "zstd"}, 413, "too_large", &json},
		{"bad zstd", "POST", "/users", &json, nil, []byte("not zstd at all"), []string{"Content-Encoding", "zstd"}, 400, "malformed", &json},
		{"bad gzip", "POST", "/users", &json, nil, []byte("not gzip"), []string{"Content-Encoding", "gzip"}, 400, "malformed", &json},
		{"unknown coding", "POST", "/users", &json, nil, []byte(`{}`), []string{"Content-Encoding", "br"}, 415, "unsupported_media_type", &json},
		{"form content type", "POST", "/echo", nil, nil, []byte(`{"first_message":"a"}`), ct("application/x-www-form-urlencoded; charset=UTF-8"), 415, "unsupported_media_type", &json},
		{"no content type", "POST", "/users", nil, &msgpack, []byte(`{}`), nil, 415, "unsupported_media_type", &msgpack},
		{"unacceptable", "GET", "/users/1", nil, nil, nil, []string{"Accept", "text/html"}, 406, "not_acceptable", &json},
		{"unacceptable post", "POST", "/users", &msgpack, nil, &api.User{Name: "x", Email: "a@b.co"}, []string{"Accept", "image/png"}, 406, "not_acceptable", &json},
		{"q=0 only", "GET", "/users/1", nil, nil, nil, []string{"Accept", "application/json;q=0"}, 406, "not_acceptable", &json},
		{"error follows request format", "POST", "/users", &msgpack, nil, &api.User{Name: "x", Email: "bad"}, nil, 400, "invalid_argument", &msgpack},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := c.do(tc.method, tc.path, tc.in, tc.out, tc.body, tc.hdr...)
			var e api.Error
			r.decode(t, tc.status, tc.errFormat, &e)
			if e.Code != tc.code || e.Error == "" {
				t.Fatalf("error body %+v, want code %s", e, tc.code)
			}
			if tc.status == 405 && r.header.Get("Allow") == "" {
				t.Error("405 without Allow header")
			}
		})
	}
	if after := c.do("GET", "/users", nil, &json, nil).body; !bytes.Equal(before, after) {
		t.Fatalf("failed requests changed the users:\nbefore %s\nafter  %s", before, after)
	}
	if after := c.do("GET", "/todos", nil, &json, nil).body; !bytes.Equal(beforeTodos, after) {
		t.Fatal("failed requests changed the todos")
	}
	if u, td := srv.Store.Len(); u != 3 || td != 3 {
		t.Fatalf("store has %d users, %d todos", u, td)
	}
}

func gzipBytes(t *testing.T, b []byte) []byte {
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	if _, err := zw.Write(b); err != nil {
		t.Fatal(err)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func zstdBytes(t *testing.T, b []byte) []byte {
	enc, err := zstd.NewWriter(nil)
	if err != nil {
		t.Fatal(err)
	}
	return enc.EncodeAll(b, nil)
}

// TestContentEncoding sends compressed bodies and asks for compressed replies.
func TestContentEncoding(t *testing.T) {
	_, c := start(t, server.Options{SeedUsers: 50})
	c.hc.Transport = &http.Transport{DisableCompression: true} // see the raw coding
	json := codec.MustLookup("json")
	plain := c.do("GET", "/users", nil, &json, nil).body
	for _, tc := range []struct{ accept, want string }{
		{"gzip", "gzip"}, {"zstd", "zstd"}, {"gzip, zstd", "zstd"}, {"zstd;q=0.5, gzip", "gzip"}, {"br", ""}, {"identity", ""},
	} {
		r := c.do("GET", "/users", nil, &json, nil, "Accept-Encoding", tc.accept)
		if got := r.header.Get("Content-Encoding"); got != tc.want {
			t.Fatalf("Accept-Encoding %q: got coding %q, want %q", tc.accept, got, tc.want)
		}
		body := r.body
		switch tc.want {
		case "gzip":
			zr, err := gzip.NewReader(bytes.NewReader(body))
			if err != nil {
				t.Fatal(err)
			}
			body, _ = io.ReadAll(zr)
		case "zstd":
			dec, _ := zstd.NewReader(nil)
			var err error
			if body, err = dec.DecodeAll(body, nil); err != nil {
				t.Fatal(err)
			}
		}
		if !bytes.Equal(body, plain) {
			t.Fatalf("%s: decoded body differs from identity", tc.accept)
		}
		if tc.want != "" && len(r.body) >= len(plain) {
			t.Errorf("%s: %d compressed bytes, %d plain", tc.want, len(r.body), len(plain))
		}
	}
	req := []byte(`{"first_message":"zip","second_message":"ped"}`)
	for coding, body := range map[string][]byte{"gzip": gzipBytes(t, req), "zstd": zstdBytes(t, req)} {
		var e api.EchoResponse
		c.do("POST", "/echo", &json, &json, body, "Content-Encoding", coding).decode(t, 200, &json, &e)
		if e.Message != "zipped" {
			t.Fatalf("%s request: echo %q", coding, e.Message)
		}
	}
}

// TestFastJSONLib serves application/json with goccy/go-json: the same
// bytes as encoding/json for the dataset.
func TestFastJSONLib(t *testing.T) {
	_, std := start(t, server.Options{SeedUsers: 20})
	_, fast := start(t, server.Options{SeedUsers: 20, HTTP: httpapi.Options{JSONLib: "fast"}})
	json := codec.MustLookup("json")
	a, b := std.do("GET", "/users", nil, &json, nil), fast.do("GET", "/users", nil, &json, nil)
	if !bytes.Equal(a.body, b.body) {
		t.Fatalf("std and fast JSON differ:\n%s\n%s", a.body, b.body)
	}
	if _, err := httpapi.New(nil, httpapi.Options{JSONLib: "nope"}); err == nil {
		t.Fatal("unknown JSON library accepted")
	}
}

func TestAcceptWildcardsAndAliases(t *testing.T) {
	_, c := start(t, server.Options{SeedUsers: 1})
	msgpack := codec.MustLookup("msgpack")
	for accept, want := range map[string]string{
		"*/*":                   "application/json",
		"application/*":         "application/json",
		"application/x-msgpack": "application/msgpack",
		"application/protobuf":  "application/x-protobuf",
		"text/html;q=0.9, application/cbor;q=0.8":     "application/cbor",
		"application/json;q=0.5, application/msgpack": "application/msgpack",
	} {
		r := c.do("GET", "/users/1", nil, nil, nil, "Accept", accept)
		if r.status != 200 || r.header.Get("Content-Type") != want {
			t.Errorf("Accept %q: %d %q, want %q", accept, r.status, r.header.Get("Content-Type"), want)
		}
	}
	// No Accept: the reply takes the request's format.
	r := c.do("POST", "/echo", &msgpack, nil, &api.EchoRequest{FirstMessage: "a"})
	if r.header.Get("Content-Type") != "application/msgpack" {
		t.Errorf("default reply format %q, want the request's", r.header.Get("Content-Type"))
	}
	// An alias in Content-Type is accepted.
	data, _ := msgpack.Codec.Marshal(&api.EchoRequest{FirstMessage: "b"})
	if r := c.do("POST", "/echo", nil, nil, data, "Content-Type", "application/x-msgpack"); r.status != 200 {
		t.Errorf("alias Content-Type: %d %q", r.status, r.body)
	}
}

func TestHealthAndMetrics(t *testing.T) {
	_, c := start(t, server.Options{SeedUsers: 1})
	if r := c.do("GET", "/healthz", nil, nil, nil); r.status != 200 {
		t.Fatalf("healthz: %d", r.status)
	}
	json := codec.MustLookup("json")
	c.do("GET", "/users/1", nil, &json, nil)
	c.do("GET", "/users/77", nil, &json, nil)
	r := c.do("GET", "/metrics", nil, nil, nil)
	for _, want := range []string{
		`wirebench_http_requests_total{format="json",route="/users/{id}",status="200"} 1`,
		`wirebench_http_requests_total{format="json",route="/users/{id}",status="404"} 1`,
		"go_memstats_heap_alloc_bytes", "go_gc_duration_seconds", "process_resident_memory_bytes",
	} {
		if !bytes.Contains(r.body, []byte(want)) {
			t.Errorf("/metrics lacks %q", want)
		}
	}
}

// TestDelay checks the calibration knob: every API response takes at least
// the configured delay (a lower bound, so the test cannot flake on a slow
// machine).
func TestDelayAndBurn(t *testing.T) {
	for _, o := range []httpapi.Options{{Delay: 30 * time.Millisecond}, {Burn: 30 * time.Millisecond}} {
		_, c := start(t, server.Options{SeedUsers: 1, HTTP: o})
		began := time.Now()
		if r := c.do("GET", "/users/1", nil, nil, nil); r.status != 200 {
			t.Fatalf("status %d", r.status)
		}
		if took := time.Since(began); took < 30*time.Millisecond {
			t.Fatalf("%+v: response took %v, want >= 30ms", o, took)
		}
	}
}
