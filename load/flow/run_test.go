package flow

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/wirebench/wirebench/load"
	"github.com/wirebench/wirebench/load/conn"
	"github.com/wirebench/wirebench/results"
)

// logServer is a small users API that logs every request it answers:
// POST /users creates (201, {"id": n, "name": ...}, Location), GET and
// DELETE /users/{id} find or remove one (404 when missing).
type logServer struct {
	mu    sync.Mutex
	log   []string // "METHOD /path"
	users map[int]string
	next  int
}

func newLogServer(t *testing.T) (*logServer, string) {
	s := &logServer{users: map[int]string{}, next: 1}
	srv := httptest.NewUnstartedServer(s)
	srv.Config.Protocols = new(http.Protocols)
	srv.Config.Protocols.SetHTTP1(true)
	srv.Config.Protocols.SetUnencryptedHTTP2(true) // h2c
	srv.Start()
	t.Cleanup(srv.Close)
	return s, srv.URL
}

func (s *logServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.log = append(s.log, r.Method+" "+r.URL.RequestURI())
	if r.Host == "other.example" {
		s.log[len(s.log)-1] += " host=" + r.Host
	}
	w.Header().Set("Content-Type", "application/json")
	id, idErr := strconv.Atoi(strings.TrimPrefix(r.URL.Path, "/users/"))
	switch {
	case r.Method == "POST" && r.URL.Path == "/users":
		var in struct{ Name string }
		if err := json.NewDecoder(r.Body).Decode(&in); err != nil {
			w.WriteHeader(400)
			return
		}
		id := s.next
		s.next++
		s.users[id] = in.Name
		w.Header().Set("Location", fmt.Sprintf("/users/%d", id))
		w.WriteHeader(201)
		fmt.Fprintf(w, `{"id": %d, "name": %q, "tags": ["a", {"k": "v"}]}`, id, in.Name)
	case idErr == nil && r.Method == "GET":
		name, ok := s.users[id]
		if !ok {
			w.WriteHeader(404)
			return
		}
		fmt.Fprintf(w, `{"id": %d, "name": %q}`, id, name)
	case idErr == nil && r.Method == "DELETE":
		if _, ok := s.users[id]; !ok {
			w.WriteHeader(404)
			return
		}
		delete(s.users, id)
		w.WriteHeader(204)
	default:
		w.WriteHeader(404)
	}
}

func (s *logServer) requests() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.log...)
}

const lifecycle = `
name: lifecycle
headers:
  Content-Type: application/json
flow:
  - post:
      name: create
      url: /users
      body: '{"name": "{{.name}}-{{.N}}"}'
      capture:
        - json: $.id
          as: id
        - header: Location
          as: loc
      check:
        - status: 201
        - json: $.tags[1].k
          equals: v
        - json: $.name
          equals: "{{.name}}-{{.N}}"
  - get:
      name: get
      url: "{{.loc}}"
      check:
        - json: $.id
          equals: "{{.id}}"
  - delete:
      name: delete
      url: /users/{{.id}}
      check:
        - status: 204
`

func writeFiles(t *testing.T, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	for name, text := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func runFlow(t *testing.T, f *Flow, url string, o load.Options) *results.Load {
	t.Helper()
	sc, err := New(f, Options{Options: conn.Options{URL: url}})
	if err != nil {
		t.Fatal(err)
	}
	defer sc.Close()
	o.Slowest = -1
	res, err := load.Run(context.Background(), o, sc)
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// The server sees exactly the requests the result counts, in each
// iteration's order, with the captured id in the later steps' URLs.
func TestFlowCapturesAndCounts(t *testing.T) {
	t.Parallel()
	for _, transport := range []string{conn.HTTP1, conn.H2C} {
		t.Run(transport, func(t *testing.T) {
			t.Parallel()
			srv, url := newLogServer(t)
			dir := writeFiles(t, map[string]string{"f.yaml": lifecycle, "d.csv": "name\nada\nbob\n"})
			f, err := Load(filepath.Join(dir, "f.yaml"), filepath.Join(dir, "d.csv"))
			if err != nil {
				t.Fatal(err)
			}
			sc, err := New(f, Options{Options: conn.Options{URL: url, Transport: transport}})
			if err != nil {
				t.Fatal(err)
			}
			defer sc.Close()
			res, err := load.Run(context.Background(), load.Options{Options: results.Options{Concurrency: 3, Requests: 30}, Slowest: -1}, sc)
			if err != nil {
				t.Fatal(err)
			}
			if res.Failed != 0 || res.Requests != 90 {
				t.Fatalf("requests %d failed %d (%v), want 90 and 0", res.Requests, res.Failed, res.Failures)
			}
			for i, name := range []string{"create", "get", "delete"} {
				if op := res.Ops[i]; op.Name != name || op.Requests != 30 || op.Latency.Count() != 30 {
					t.Errorf("op %d: %s %d requests, %d latencies; want %s 30", i, op.Name, op.Requests, op.Latency.Count(), name)
				}
			}
			log := srv.requests()
			if int64(len(log)) != res.Requests {
				t.Fatalf("server saw %d requests, the result counts %d", len(log), res.Requests)
			}
			n := map[string]int{}
			for _, r := range log {
				n[strings.SplitN(r, "/", 3)[0]+"/"+strings.SplitN(r, "/", 3)[1]]++
			}
			if n["POST /users"] != 30 || n["GET /users"] != 30 || n["DELETE /users"] != 30 {
				t.Errorf("server saw %v", n)
			}
			if len(srv.users) != 0 {
				t.Errorf("%d users left: a delete did not use the id its create captured", len(srv.users))
			}
		})
	}
}

// A failed check or capture is a counted failure naming the step and the
// check; the iteration stops there (no later step is sent).
func TestFlowFailuresNameStepAndCheck(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name, from, to, want string
		sent                 int // requests per iteration the server sees
	}{
		{"status", "- status: 204", "- status: 200", `step 3 "delete": status 204, want 200`, 3},
		{"json equals", "equals: v", "equals: w", `step 1 "create": check json $.tags[1].k equals "w": differs`, 1},
		{"capture", "json: $.id\n", "json: $.nope\n", `step 1 "create": capture id: $.nope not found in the response body`, 1},
		{"header capture", "header: Location", "header: X-None", `step 1 "create": capture loc: no x-none header in the response`, 1},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			srv, url := newLogServer(t)
			text := strings.Replace(lifecycle, tc.from, tc.to, 1)
			if text == lifecycle {
				t.Fatalf("%q not in the flow", tc.from)
			}
			dir := writeFiles(t, map[string]string{"f.yaml": text, "d.csv": "name\nada\n"})
			f, err := Load(filepath.Join(dir, "f.yaml"), filepath.Join(dir, "d.csv"))
			if err != nil {
				t.Fatal(err)
			}
			res := runFlow(t, f, url, load.Options{Options: results.Options{Concurrency: 1, Requests: 4}})
			if res.Failures[tc.want] != 4 || res.Failed != 4 {
				t.Fatalf("failures %v, want 4 × %q", res.Failures, tc.want)
			}
			if it := res.Iterations; it == nil || it.Count != 4 || it.Failed != 4 {
				t.Fatalf("iterations %+v, want 4 failed", it)
			}
			if got := len(srv.requests()); got != 4*tc.sent || int64(got) != res.Requests {
				t.Errorf("server saw %d requests, result counts %d, want %d", got, res.Requests, 4*tc.sent)
			}
			if c := results.CauseOf(tc.want); c == results.CauseOther {
				t.Errorf("%q classified as %q", tc.want, c)
			}
		})
	}
}

// Open loop paces iterations: -r 100 for 0.3 s sends about 30 iterations,
// every one of their steps, and -n counts iterations in closed loop.
func TestFlowOpenLoopPacesIterations(t *testing.T) {
	t.Parallel()
	srv, url := newLogServer(t)
	dir := writeFiles(t, map[string]string{"f.yaml": lifecycle, "d.csv": "name\nada\n"})
	f, err := Load(filepath.Join(dir, "f.yaml"), filepath.Join(dir, "d.csv"))
	if err != nil {
		t.Fatal(err)
	}
	res := runFlow(t, f, url, load.Options{Options: results.Options{Open: true, Rate: 100, Duration: 300_000_000, Concurrency: 20}})
	iters := res.Ops[0].Requests
	if iters < 25 || iters > 31 || res.Ops[2].Requests != iters || res.Failed != 0 {
		t.Fatalf("ops %d/%d/%d, failed %d (%v): want about 30 whole iterations", res.Ops[0].Requests, res.Ops[1].Requests, res.Ops[2].Requests, res.Failed, res.Failures)
	}
	if int64(len(srv.requests())) != res.Requests {
		t.Errorf("server saw %d, result %d", len(srv.requests()), res.Requests)
	}
	if res.Lag.Count() != iters {
		t.Errorf("%d lags recorded for %d iterations: only an iteration's start is scheduled", res.Lag.Count(), iters)
	}
	it := res.Iterations
	if it == nil || it.Count != iters || it.Failed != 0 || it.Latency.Count() != iters || it.Service.Count() != iters {
		t.Fatalf("iterations %+v, want %d", it, iters)
	}
	// An iteration's latency spans its three steps, from its schedule.
	if it.Latency.Min() < res.Ops[0].Latency.Min()+res.Ops[1].Service.Min()+res.Ops[2].Service.Min() {
		t.Errorf("iteration latency min %v below its steps' %v+%v+%v", it.Latency.Min(), res.Ops[0].Latency.Min(), res.Ops[1].Service.Min(), res.Ops[2].Service.Min())
	}
}

// An iteration the end of the run cuts between two steps (in a think
// longer than the graceful stop) is interrupted, not counted, and its
// next step is not sent.
func TestFlowIterationCutByTheEnd(t *testing.T) {
	t.Parallel()
	srv, url := newLogServer(t)
	f, err := Parse("f.yaml", []byte("flow:\n  - post:\n      url: /users\n      body: '{\"name\": \"x\"}'\n  - think: 1m\n  - get:\n      url: /users/1\n"), "", noFile)
	if err != nil {
		t.Fatal(err)
	}
	// A second for the two POSTs (50 ms was too short on a busy box: the
	// run ended before either was answered), then the think outlasts it.
	res := runFlow(t, f, url, load.Options{Options: results.Options{Concurrency: 2, Duration: time.Second, GracefulStop: 50 * time.Millisecond}})
	if it := res.Iterations; it == nil || it.Count != 0 || it.Interrupted != 2 {
		t.Fatalf("iterations %+v, want 2 interrupted, none counted", it)
	}
	if res.Ops[0].Requests != 2 || res.Ops[1].Requests != 0 || len(srv.requests()) != 2 {
		t.Errorf("ops %d, %d; server saw %v", res.Ops[0].Requests, res.Ops[1].Requests, srv.requests())
	}
}

// A step's Host header replaces the base URL's, once (HTTP/1.1 and h2c).
func TestFlowHostHeader(t *testing.T) {
	t.Parallel()
	for _, transport := range []string{conn.HTTP1, conn.H2C} {
		srv, url := newLogServer(t)
		f, err := Parse("f.yaml", []byte("flow:\n  - get:\n      url: /users/1\n      headers: {Host: other.example}\n      check: [{status: 404}]\n"), "", noFile)
		if err != nil {
			t.Fatal(err)
		}
		sc, err := New(f, Options{Options: conn.Options{URL: url, Transport: transport}})
		if err != nil {
			t.Fatal(err)
		}
		res, err := load.Run(context.Background(), load.Options{Options: results.Options{Concurrency: 1, Requests: 2}, Slowest: -1}, sc)
		sc.Close()
		if err != nil || res.Failed != 0 {
			t.Fatalf("%s: %v %v", transport, err, res.Failures)
		}
		if got := srv.requests(); len(got) != 2 || got[0] != "GET /users/1 host=other.example" {
			t.Errorf("%s: server saw %q", transport, got)
		}
	}
}

// --format re-encodes only the reference API's routes: a body for any
// other is a failure naming the route, and is not sent.
func TestFlowFormatOutsideTheAPI(t *testing.T) {
	t.Parallel()
	srv, url := newLogServer(t)
	f, err := Parse("f.yaml", []byte("flow:\n  - post:\n      url: /nope/{{.N}}\n      body: '{}'\n"), "", noFile)
	if err != nil {
		t.Fatal(err)
	}
	sc, err := New(f, Options{Options: conn.Options{URL: url}, Format: "protobuf"})
	if err != nil {
		t.Fatal(err)
	}
	defer sc.Close()
	res, err := load.Run(context.Background(), load.Options{Options: results.Options{Concurrency: 1, Requests: 3}, Slowest: -1}, sc)
	if err != nil {
		t.Fatal(err)
	}
	want := `step 1 "POST /nope/{{.N}}": format protobuf: not a route of the reference API with a body`
	if res.Failed != 3 || res.Failures[want] != 3 || len(srv.requests()) != 0 {
		t.Fatalf("failures %v, server saw %v; want 3 × %q and nothing sent", res.Failures, srv.requests(), want)
	}
	if _, err := New(f, Options{Options: conn.Options{URL: url}, Format: "xml"}); err == nil {
		t.Error("format xml accepted")
	}
}
