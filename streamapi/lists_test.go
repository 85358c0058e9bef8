package streamapi_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/wirebench/wirebench/api"
	"github.com/wirebench/wirebench/httpapi"
	"github.com/wirebench/wirebench/internal/testkit"
	"github.com/wirebench/wirebench/server"
)

func start(t *testing.T, o server.Options) *server.Server {
	t.Helper()
	o.HTTPAddr, o.GRPCAddr = "127.0.0.1:0", "127.0.0.1:0"
	srv, err := server.Start(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Close() })
	return srv
}

func get(t *testing.T, url, accept string) *http.Response {
	t.Helper()
	req, _ := http.NewRequest(http.MethodGet, url, nil)
	if accept != "" {
		req.Header.Set("Accept", accept)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { resp.Body.Close() })
	return resp
}

func TestNDJSONOneLinePerUser(t *testing.T) {
	srv := start(t, server.Options{SeedUsers: 1000, SeedTodos: 1000})
	resp := get(t, "http://"+srv.HTTPAddr()+"/users", "application/x-ndjson")
	if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "application/x-ndjson" {
		t.Fatalf("status %d, Content-Type %q", resp.StatusCode, resp.Header.Get("Content-Type"))
	}
	if resp.ContentLength != -1 {
		t.Fatalf("Content-Length %d: a stream has none (chunked)", resp.ContentLength)
	}
	want := srv.Store.ListUsers()
	body, _ := io.ReadAll(resp.Body)
	lines := strings.Split(string(body), "\n")
	if len(lines) != len(want)+1 || lines[len(lines)-1] != "" {
		t.Fatalf("%d lines (last %q), want %d records each ended by a newline", len(lines), lines[len(lines)-1], len(want))
	}
	for i, line := range lines[:len(want)] {
		exp, _ := json.Marshal(want[i])
		if line != string(exp) {
			t.Fatalf("line %d = %s\nwant %s", i+1, line, exp)
		}
	}

	resp = get(t, "http://"+srv.HTTPAddr()+"/todos", "application/jsonl")
	n, last := 0, ""
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		var td api.Todo
		if err := json.Unmarshal(sc.Bytes(), &td); err != nil || td.ID <= last {
			t.Fatalf("todo line %d %q: %v (ids must ascend)", n+1, sc.Text(), err)
		}
		last = td.ID
		n++
	}
	if n != 1000 {
		t.Fatalf("%d todo lines, want 1000", n)
	}
}

// Without a stream type in Accept, /users is httpapi's list, untouched.
func TestOtherAcceptsReachTheRESTAPI(t *testing.T) {
	srv := start(t, server.Options{SeedUsers: 3})
	for _, accept := range []string{"", "application/json", "*/*", "application/json, application/x-ndjson;q=0.5"} {
		resp := get(t, "http://"+srv.HTTPAddr()+"/users", accept)
		var l api.UserList
		if err := json.NewDecoder(resp.Body).Decode(&l); err != nil || len(l.Users) != 3 || resp.Header.Get("Content-Type") != "application/json" {
			t.Errorf("Accept %q: %v, %d users, %q", accept, err, len(l.Users), resp.Header.Get("Content-Type"))
		}
	}
}

// sseEvent is one parsed event: the fields of its lines.
type sseEvent struct{ id, event, data string }

// readSSE parses an event stream strictly: every line is "field: value"
// or a comment, every event ends with a blank line.
func readSSE(t *testing.T, r io.Reader) []sseEvent {
	t.Helper()
	var out []sseEvent
	var cur sseEvent
	open := false
	sc := bufio.NewScanner(r)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		line := sc.Text()
		switch {
		case line == "":
			if !open {
				t.Fatalf("blank line with no event before it (after %d events)", len(out))
			}
			out, cur, open = append(out, cur), sseEvent{}, false
		case strings.HasPrefix(line, ":"):
		default:
			k, v, ok := strings.Cut(line, ": ")
			if !ok {
				t.Fatalf("line %q is not field: value", line)
			}
			switch k {
			case "id":
				cur.id = v
			case "event":
				cur.event = v
			case "data":
				cur.data = v
			default:
				t.Fatalf("unknown field %q", k)
			}
			open = true
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatalf("after %d events: %v", len(out), err)
	}
	if open {
		t.Fatalf("stream ends inside an event: %+v", cur)
	}
	return out
}

func TestSSEFraming(t *testing.T) {
	srv := start(t, server.Options{SeedUsers: 1000, SeedTodos: 100})
	resp := get(t, "http://"+srv.HTTPAddr()+"/users/events", "")
	if ct := resp.Header.Get("Content-Type"); ct != "text/event-stream" || resp.Header.Get("Cache-Control") != "no-store" {
		t.Fatalf("Content-Type %q, Cache-Control %q", ct, resp.Header.Get("Cache-Control"))
	}
	// The exact bytes of the first event.
	first := srv.Store.ListUsers()[0]
	data, _ := json.Marshal(first)
	want := fmt.Sprintf("id: 1\nevent: user\ndata: %s\n\n", data)
	head := make([]byte, len(want))
	if _, err := io.ReadFull(resp.Body, head); err != nil || string(head) != want {
		t.Fatalf("first event %q, %v\nwant %q", head, err, want)
	}
	evs := readSSE(t, resp.Body)
	if len(evs) != 1000 {
		t.Fatalf("%d events after the first, want 999 users and end", len(evs))
	}
	for i, e := range evs[:998] {
		if e.event != "user" || e.id != fmt.Sprint(i+2) {
			t.Fatalf("event %d = %+v", i+2, e)
		}
	}
	if end := evs[999]; end.event != "end" || end.data != `{"count":1000}` || end.id != "" {
		t.Fatalf("last event %+v, want end with count 1000", end)
	}

	// Accept: text/event-stream on /todos is the same stream.
	resp = get(t, "http://"+srv.HTTPAddr()+"/todos", "text/event-stream")
	if evs := readSSE(t, resp.Body); len(evs) != 101 || evs[0].event != "todo" || evs[100].data != `{"count":100}` {
		t.Fatalf("todos: %d events", len(evs))
	}
}

func TestSSEResumesAfterLastEventID(t *testing.T) {
	srv := start(t, server.Options{SeedUsers: 10, SeedTodos: 10})
	req, _ := http.NewRequest(http.MethodGet, "http://"+srv.HTTPAddr()+"/users/events", nil)
	req.Header.Set("Last-Event-ID", "7")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	evs := readSSE(t, resp.Body)
	if len(evs) != 4 || evs[0].id != "8" || evs[2].id != "10" || evs[3].data != `{"count":3}` {
		t.Fatalf("resumed after 7: %+v", evs)
	}
	todos := srv.Store.ListTodos()
	resp = get(t, "http://"+srv.HTTPAddr()+"/todos/events?after="+todos[4].ID, "")
	if evs := readSSE(t, resp.Body); len(evs) != 6 || evs[0].id != todos[5].ID {
		t.Fatalf("todos after the 5th: %+v", evs)
	}
	if resp := get(t, "http://"+srv.HTTPAddr()+"/users/events?after=x", ""); resp.StatusCode != 400 {
		t.Fatalf("after=x: status %d, want 400", resp.StatusCode)
	}
	if resp := get(t, "http://"+srv.HTTPAddr()+"/todos/events?follow=1", ""); resp.StatusCode != 400 {
		t.Fatalf("todos follow: status %d, want 400", resp.StatusCode)
	}
	req, _ = http.NewRequest(http.MethodPost, "http://"+srv.HTTPAddr()+"/users/events", nil)
	if resp, err := http.DefaultClient.Do(req); err != nil || resp.StatusCode != 405 || resp.Header.Get("Allow") != "GET, HEAD" {
		t.Fatalf("POST: %v %v", resp, err)
	}
}

// follow=1 pushes a user created while the stream is open, then ends
// with "end" at the stream's duration limit.
func TestSSEFollowPushesNewUsers(t *testing.T) {
	srv := start(t, server.Options{SeedUsers: 2, MaxStreamDuration: 1500 * time.Millisecond})
	resp := get(t, "http://"+srv.HTTPAddr()+"/users/events?follow=1", "")
	br := bufio.NewReader(resp.Body)
	for range 2 * 4 { // the two seeded users' lines
		if _, err := br.ReadString('\n'); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := srv.Store.CreateUser(api.User{Name: "Ada", Email: "ada@example.com"}); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	evs := readSSE(t, br)
	if len(evs) != 2 || evs[0].id != "3" || !strings.Contains(evs[0].data, `"Ada"`) || evs[1].event != "end" || evs[1].data != `{"count":3}` {
		t.Fatalf("after the seeded users: %+v", evs)
	}
	// The stream ends at its 1.5 s limit: generous bounds for a busy box.
	if d := time.Since(start); testkit.Timing() && d > 10*time.Second {
		t.Fatalf("follow ended after %v", d)
	}
}

func TestHEADHasNoBody(t *testing.T) {
	srv := start(t, server.Options{SeedUsers: 5})
	for _, c := range []struct{ path, accept, ct string }{
		{"/users", "application/x-ndjson", "application/x-ndjson"},
		{"/users/events", "", "text/event-stream"},
	} {
		req, _ := http.NewRequest(http.MethodHead, "http://"+srv.HTTPAddr()+c.path, nil)
		req.Header.Set("Accept", c.accept)
		resp, err := http.DefaultClient.Do(req)
		if err != nil || resp.StatusCode != 200 || resp.Header.Get("Content-Type") != c.ct {
			t.Fatalf("HEAD %s: %v %v", c.path, resp, err)
		}
		resp.Body.Close()
	}
}

func httpOpts(maxBody int64) httpapi.Options { return httpapi.Options{MaxBody: maxBody} }
