package replay

import (
	"context"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/wirebench/wirebench/load"
	"github.com/wirebench/wirebench/load/conn"
	"github.com/wirebench/wirebench/load/replay/reqlog"
)

// seen is what the test server received.
type seen struct {
	mu      sync.Mutex
	targets []string
	bodies  map[string]string
	headers http.Header
	protos  map[string]int // r.Proto: HTTP/1.1, HTTP/2.0, HTTP/3.0
}

func newSeen() *seen { return &seen{bodies: map[string]string{}, protos: map[string]int{}} }

// handler records what it receives in s and answers 404 under /missing,
// else "ok".
func (s *seen) handler() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		s.mu.Lock()
		s.protos[r.Proto]++
		s.targets = append(s.targets, r.Method+" "+r.RequestURI)
		if len(b) > 0 {
			s.bodies[r.RequestURI] = string(b)
		}
		if r.URL.Path == "/users/1" {
			s.headers = r.Header.Clone()
			s.headers.Set("Host", r.Host)
		}
		s.mu.Unlock()
		if strings.HasPrefix(r.URL.Path, "/missing") {
			http.NotFound(w, r)
			return
		}
		w.Write([]byte("ok"))
	})
}

func testServer(t *testing.T, s *seen) string {
	t.Helper()
	h := s.handler()
	var protos http.Protocols
	protos.SetHTTP1(true)
	protos.SetUnencryptedHTTP2(true)
	srv := &http.Server{Handler: h, Protocols: &protos}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Close() })
	return "http://" + ln.Addr().String()
}

// recording writes 60 requests over 60 ms: three endpoints with ids, a
// POST with a body, a recorded 404, headers to drop.
func recording(t *testing.T) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "rec.log")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	w := reqlog.NewWriter(f, reqlog.Options{})
	for i := 0; i < 60; i++ {
		r := reqlog.Request{At: 1e18 + int64(i)*int64(time.Millisecond), Method: "GET", Status: 200}
		switch i % 4 {
		case 0:
			r.Target = "/users/" + string(rune('1'+i%9))
			r.Header = [][2]string{{"Cookie", "secret"}, {"Connection", "keep-alive"}, {"Accept", "application/json"}, {"Host", "recorded.example"}}
		case 1:
			r.Target = "/todos/3f2a9c1e-0b7d-4c55-9a8e-1234567890ab?x=" + string(rune('a'+i%26))
		case 2:
			r.Method, r.Target, r.Body, r.Status = "POST", "/echo/"+string(rune('a'+i%26)), []byte("body"), 201
		case 3:
			r.Target, r.Status = "/missing/9", 404
		}
		if err := w.Write(&r); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	f.Close()
	return path
}

func TestReplayEndToEnd(t *testing.T) {
	for _, tr := range []string{conn.HTTP1, conn.H2C} {
		t.Run(tr, func(t *testing.T) {
			s := newSeen()
			replayAndCheck(t, s, Options{Options: conn.Options{URL: testServer(t, s), Transport: tr}}, map[string]string{conn.HTTP1: "HTTP/1.1", conn.H2C: "HTTP/2.0"}[tr])
		})
	}
}

// replayAndCheck replays recording(t) with o to the server whose requests
// s records: every request arrives, over protocol proto, with its body and
// headers, and the result counts them per endpoint, with the body bytes
// sent once.
func replayAndCheck(t *testing.T, s *seen, o Options, proto string) {
	t.Helper()
	o.File, o.Speed, o.DropHeaders = recording(t), 2, []string{"cookie"}
	res := runReplay(t, o)
	if res.Requests != 60 || res.Failed != 0 || res.Lag.Count() != 60 {
		t.Fatalf("requests %d failed %d (%v), lag count %d", res.Requests, res.Failed, res.Failures, res.Lag.Count())
	}
	if res.Bytes.BodyOut != 15*4 {
		t.Errorf("body bytes out %d, want 60 (15 POSTs of 4 bytes)", res.Bytes.BodyOut)
	}
	names := map[string]int64{}
	for _, op := range res.Ops {
		names[op.Name] = op.Requests
	}
	want := map[string]int64{"GET /users/{id}": 15, "GET /todos/{id}": 15, "POST /echo/a": 1, "GET /missing/{id}": 15}
	for n, c := range want {
		if names[n] != c {
			t.Errorf("endpoint %q: %d requests, want %d (all: %v)", n, names[n], c, names)
		}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.targets) != 60 || s.bodies["/echo/c"] != "body" || s.protos[proto] != 60 {
		t.Fatalf("server saw %d requests (%v), bodies %v", len(s.targets), s.protos, s.bodies)
	}
	if s.headers.Get("Cookie") != "" || s.headers.Get("Accept") != "application/json" || s.headers.Get("Host") == "recorded.example" {
		t.Fatalf("headers sent: %v", s.headers)
	}
}

// TestReplayChecksRecordedStatusClass: a 2xx recorded and a 404 answered fails.
func TestReplayChecksRecordedStatusClass(t *testing.T) {
	for _, c := range []struct {
		got, rec int
		fail     bool
	}{{200, 200, false}, {204, 201, false}, {404, 404, false}, {404, 200, true}, {500, 0, true}, {302, 0, false}} {
		if f := checkStatus(c.got, c.rec); (f != "") != c.fail {
			t.Errorf("checkStatus(%d, %d) = %q", c.got, c.rec, f)
		}
	}
}

func TestReplayDryRun(t *testing.T) {
	sc, err := New(Options{File: recording(t), Options: conn.Options{URL: "http://127.0.0.1:1"}, Speed: 1e6, DryRun: true})
	if err != nil {
		t.Fatal(err)
	}
	defer sc.Close()
	o := load.Options{Pacer: sc.Pacer()}
	o.Open, o.Concurrency, o.Duration = true, 2, time.Minute
	res, err := load.Run(context.Background(), o, sc)
	if err != nil {
		t.Fatal(err)
	}
	if res.Requests != 60 || res.Failed != 0 {
		t.Fatalf("dry run: %d requests, %d failed %v", res.Requests, res.Failed, res.Failures)
	}
}

// TestReplayOfASafeRecording: a recording made with its default Options
// (KV bodies kept out, secrets REDACTED) replays each kept-out body as
// filler of its recorded length, and the result says so, with the
// requests that carried REDACTED values.
func TestReplayOfASafeRecording(t *testing.T) {
	path := filepath.Join(t.TempDir(), "safe.log")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	w := reqlog.NewWriter(f, reqlog.Options{})
	for i, r := range []reqlog.Request{
		{Method: "PUT", Target: "/kv/a", Body: []byte("value-abc"), Status: 200},
		{Method: "GET", Target: "/kv/a?token=t0k", Header: [][2]string{{"Authorization", "Bearer t0k"}}, Status: 200},
	} {
		r.At = 1e18 + int64(i)*int64(time.Millisecond)
		if err := w.Write(&r); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	f.Close()
	s := newSeen()
	res := runReplay(t, Options{Options: conn.Options{URL: testServer(t, s)}, File: path})
	if got := s.bodies["/kv/a"]; got != "xxxxxxxxx" {
		t.Errorf("kept-out body sent as %q, want 9 filler bytes", got)
	}
	w1 := strings.Join(res.Warnings, "\n")
	if !strings.Contains(w1, "1 requests' bodies were kept out") || !strings.Contains(w1, "1 requests carried REDACTED values") {
		t.Errorf("warnings %q", res.Warnings)
	}
}
