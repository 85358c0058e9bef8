package load

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/wirebench/wirebench/load/conn"
	"github.com/wirebench/wirebench/results"
)

// Raw mode's checks (fairness rule 2): a server that answers with the
// right protocol and the wrong status or body must fail every request
// with the check's reason, on every client. scripts/mutants/load-checks.txt
// switches each check off and blanks each reason; these tests must fail
// every one.

// startPlainServer serves h over HTTP/1.1 and h2c on 127.0.0.1:0 and
// returns its http://host:port.
func startPlainServer(t *testing.T, h http.HandlerFunc) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var protos http.Protocols
	protos.SetHTTP1(true)
	protos.SetUnencryptedHTTP2(true)
	s := &http.Server{Protocols: &protos, Handler: h}
	go s.Serve(ln)
	t.Cleanup(func() { s.Close() })
	return "http://" + ln.Addr().String()
}

func sameCounts(got, want map[string]int64) bool {
	if len(got) == 0 && len(want) == 0 {
		return true
	}
	return maps.Equal(got, want)
}

// TestRawChecks: raw mode's two checks, status and body-contains, on every
// client, against a server that answers 2xx with the wrong content.
func TestRawChecks(t *testing.T) {
	ts := startPlainServer(t, func(w http.ResponseWriter, r *http.Request) {
		code := map[string]int{"/201": 201, "/204": 204, "/299": 299, "/300": 300}[r.URL.Path]
		if code == 0 {
			code = 200
		}
		w.WriteHeader(code)
		if code != 204 {
			fmt.Fprintf(w, "the body of %s", r.URL.Path)
		}
	})
	const n = 5
	type rc struct {
		path, contains string
		status         []int
		want           map[string]int64
	}
	cases := []rc{
		{"/right", "body of /right", nil, nil},
		{"/wrong", "body of /right", nil, map[string]int64{`body check: no "body of /right"`: n}},
		{"/201", "", []int{201}, nil},
		{"/right", "", []int{201}, map[string]int64{"status 200": n}},
		{"/201", "", []int{200, 202}, map[string]int64{"status 201": n}},
		// no expected status: any 2xx, from 200 to 299 inclusive
		{"/204", "", nil, nil},
		{"/299", "", nil, nil},
		{"/300", "", nil, map[string]int64{"status 300": n}},
		// both checks: the status first
		{"/wrong", "body of /right", []int{201}, map[string]int64{"status 200": n}},
	}
	clients := []struct {
		name, client, transport string
		loop                    bool
	}{
		{"lean", conn.ClientLean, conn.HTTP1, false},
		{"loop", conn.ClientLean, conn.HTTP1, true}, // the event-loop engine
		{"std", conn.ClientStd, conn.HTTP1, false},
		{"h2c", "", conn.H2C, false},
	}
	ran := 0
	for _, cl := range clients {
		for _, c := range cases {
			t.Run(fmt.Sprintf("%s%s%v%q", cl.name, c.path, c.status, c.contains), func(t *testing.T) {
				ran++
				sc, err := NewRaw(RawOptions{
					Options:            conn.Options{URL: ts + c.path, Client: cl.client, Transport: cl.transport, Timeout: 5 * time.Second},
					ExpectStatus:       c.status,
					ExpectBodyContains: c.contains,
				})
				if err != nil {
					t.Fatal(err)
				}
				r, err := Run(context.Background(), Options{Options: results.Options{Concurrency: 1, Requests: n, EventLoop: cl.loop}}, sc)
				if err != nil {
					t.Fatal(err)
				}
				if r.Requests != n || !sameCounts(r.Failures, c.want) {
					t.Errorf("%d requests, failures %v, want %v", r.Requests, r.Failures, c.want)
				}
			})
		}
	}
	if ran != len(clients)*len(cases) {
		t.Fatalf("ran %d cases", ran)
	}
}

// TestRawTransportFailures: a reply that is not HTTP fails every request
// on every HTTP/1.1 client, the event loop included.
func TestRawTransportFailures(t *testing.T) {
	url := startPlainServer(t, func(w http.ResponseWriter, r *http.Request) {
		conn, buf, err := w.(http.Hijacker).Hijack()
		if err != nil {
			t.Error(err)
			return
		}
		buf.WriteString("HTTP/1.1 two hundred OK\r\n\r\n")
		buf.Flush()
		conn.Close()
	})
	const n = 5
	for _, c := range []struct {
		name, client string
		loop         bool
		want         string // "" when net/http words it
	}{{"lean", conn.ClientLean, false, "malformed response"}, {"loop", conn.ClientLean, true, "malformed response"}, {"std", conn.ClientStd, false, "malformed response"}} {
		sc, err := NewRaw(RawOptions{Options: conn.Options{URL: url + "/", Client: c.client, Timeout: 5 * time.Second}})
		if err != nil {
			t.Fatal(err)
		}
		r, err := Run(context.Background(), Options{Options: results.Options{Concurrency: 1, Requests: n, EventLoop: c.loop}}, sc)
		if err != nil {
			t.Fatal(err)
		}
		if r.Requests != n || r.Failed != n || (c.want != "" && r.Failures[c.want] != n) {
			t.Errorf("%s: %d requests, %d failed: %v", c.name, r.Requests, r.Failed, r.Failures)
		}
	}
}

// TestRawLoopUnresolvable: the event loops resolve the host once; when
// that fails, every VU's request fails with the resolver's reason.
func TestRawLoopUnresolvable(t *testing.T) {
	r0 := net.DefaultResolver
	goDNS, dial := r0.PreferGo, r0.Dial
	t.Cleanup(func() { r0.PreferGo, r0.Dial = goDNS, dial })
	r0.PreferGo, r0.Dial = true, func(context.Context, string, string) (net.Conn, error) {
		return nil, errors.New("no DNS in this test")
	}
	sc, err := NewRaw(RawOptions{Options: conn.Options{URL: "http://nosuch.invalid:80/", Timeout: 5 * time.Second}})
	if err != nil {
		t.Fatal(err)
	}
	r, err := Run(context.Background(), Options{Options: results.Options{Concurrency: 3, Requests: 3, EventLoop: true}}, sc)
	if err != nil {
		t.Fatal(err)
	}
	if r.Failed != 3 || len(r.Failures) != 1 {
		t.Fatalf("%d failed: %v", r.Failed, r.Failures)
	}
	for reason := range r.Failures {
		if !strings.HasPrefix(reason, "lookup nosuch.invalid") {
			t.Errorf("reason %q", reason)
		}
	}
}
