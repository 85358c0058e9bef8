package httpapi_test

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/wirebench/wirebench/api"
	"github.com/wirebench/wirebench/codec"
	"github.com/wirebench/wirebench/httpapi"
	"github.com/wirebench/wirebench/server"
)

// TestHEAD: HEAD is answered like GET without a body (it was 405).
func TestHEAD(t *testing.T) {
	_, c := start(t, server.Options{SeedUsers: 3, SeedTodos: 3})
	js := codec.MustLookup("json")
	for _, path := range []string{"/users", "/users/1", "/todos", "/users/99", "/nope"} {
		get := c.do("GET", path, nil, &js, nil)
		head := c.do("HEAD", path, nil, &js, nil)
		if head.status != get.status || len(head.body) != 0 {
			t.Errorf("HEAD %s: status %d with %d body bytes; GET: %d", path, head.status, len(head.body), get.status)
		}
		if cl := head.header.Get("Content-Length"); cl != strconv.Itoa(len(get.body)) {
			t.Errorf("HEAD %s: Content-Length %q, GET sent %d bytes", path, cl, len(get.body))
		}
		if head.header.Get("Content-Type") != get.header.Get("Content-Type") {
			t.Errorf("HEAD %s: Content-Type %q, GET %q", path, head.header.Get("Content-Type"), get.header.Get("Content-Type"))
		}
	}
	r := c.do("PATCH", "/users", nil, &js, nil)
	if r.status != 405 || r.header.Get("Allow") != "GET, HEAD, POST" {
		t.Errorf("405 Allow = %q", r.header.Get("Allow"))
	}
	if r := c.do("HEAD", "/echo", nil, &js, nil); r.status != 405 || r.header.Get("Allow") != "POST" {
		t.Errorf("HEAD /echo: %d, Allow %q", r.status, r.header.Get("Allow"))
	}
}

// TestExpectContinueOverLimit: a request that declares a body over the
// limit and waits for 100 Continue gets its 413 at once; it used to get
// 100 Continue and a 413 only after the server had read 8 MiB.
func TestExpectContinueOverLimit(t *testing.T) {
	const limit = 4096
	srv, c := start(t, server.Options{SeedUsers: 2, HTTP: httpapi.Options{MaxBody: limit}})
	for _, tc := range []struct {
		length int64
		want   string
	}{{100 << 20, "413"}, {limit + 1, "413"}, {limit, "400"}} {
		conn, err := net.Dial("tcp", srv.HTTPAddr())
		if err != nil {
			t.Fatal(err)
		}
		conn.SetDeadline(time.Now().Add(10 * time.Second))
		fmt.Fprintf(conn, "POST /users HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: %d\r\nExpect: 100-continue\r\n\r\n", tc.length)
		br := bufio.NewReader(conn)
		status, err := br.ReadString('\n')
		if err != nil {
			t.Fatal(err)
		}
		if tc.want == "413" {
			resp, err := http.ReadResponse(bufio.NewReader(io.MultiReader(strings.NewReader(status), br)), nil)
			if err != nil {
				t.Fatal(err)
			}
			body, _ := io.ReadAll(resp.Body)
			if resp.StatusCode != 413 || !strings.Contains(string(body), `"too_large"`) {
				t.Errorf("Content-Length %d: %d %q", tc.length, resp.StatusCode, body)
			}
		} else {
			// At the limit the body is wanted: 100 Continue, then a 400
			// for a body of spaces.
			if !strings.HasPrefix(status, "HTTP/1.1 100") {
				t.Fatalf("Content-Length %d: %q, want 100 Continue", tc.length, status)
			}
			br.ReadString('\n')
			io.WriteString(conn, strings.Repeat(" ", int(tc.length)))
			resp, err := http.ReadResponse(br, nil)
			if err != nil {
				t.Fatal(err)
			}
			if resp.StatusCode != 400 {
				t.Errorf("Content-Length %d (the limit): %d", tc.length, resp.StatusCode)
			}
		}
		conn.Close()
	}
	var u api.User
	js := codec.MustLookup("json")
	c.do("GET", "/users/1", nil, &js, nil).decode(t, 200, &js, &u)
}

// TestCanonicalIDs: only the canonical decimal spelling names a user;
// "+2" and "02" resolved to user 2, and DELETE /users/+2 deleted it.
func TestCanonicalIDs(t *testing.T) {
	srv, c := start(t, server.Options{SeedUsers: 3})
	js := codec.MustLookup("json")
	for _, id := range []string{"+1", "01", "001", "-0", "+0", "1.0", "1e0", "0x1", "%2B1", "1%20", "%201", "９", "9223372036854775808", "-9223372036854775809"} {
		for _, method := range []string{"GET", "PUT", "DELETE"} {
			var body any
			var in *codec.Entry
			if method == "PUT" {
				body, in = &api.User{Name: "Eve", Email: "eve@example.com"}, &js
			}
			var e api.Error
			c.do(method, "/users/"+id, in, &js, body).decode(t, 404, &js, &e)
			if e.Code != "not_found" {
				t.Errorf("%s /users/%s: %+v", method, id, e)
			}
		}
	}
	if n, _ := srv.Store.Len(); n != 3 {
		t.Fatalf("store has %d users", n)
	}
	for id := 1; id <= 3; id++ {
		u, err := srv.Store.GetUser(int64(id))
		if err != nil || u.Name == "Eve" {
			t.Fatalf("user %d: %+v, %v", id, u, err)
		}
	}
	var u api.User
	c.do("GET", "/users/2", nil, &js, nil).decode(t, 200, &js, &u)
}
