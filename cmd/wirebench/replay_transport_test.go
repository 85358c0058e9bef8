package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/wirebench/wirebench/internal/testkit"
	"github.com/wirebench/wirebench/load/replay/reqlog"
)

// writeRecording writes a request log of n GET /users/{id} (1–20), n/4
// POST /echo and n/8 recorded 404s, 2 ms apart.
func writeRecording(t *testing.T, path string, n int) []reqlog.Request {
	t.Helper()
	var reqs []reqlog.Request
	for i := range n {
		reqs = append(reqs, reqlog.Request{Method: "GET", Target: fmt.Sprintf("/users/%d", 1+i%20), Status: 200})
	}
	for range n / 4 {
		reqs = append(reqs, reqlog.Request{Method: "POST", Target: "/echo", Status: 200,
			Header: [][2]string{{"Content-Type", "application/json"}}, Body: []byte(`{"first_message":"a","second_message":"b"}`)})
	}
	for range n / 8 {
		reqs = append(reqs, reqlog.Request{Method: "GET", Target: "/users/99999", Status: 404})
	}
	writeReqlog(t, path, reqs)
	return reqs
}

// requestCounts counts requests by method, target and status, leaving
// out the test's own /metrics reads.
func requestCounts(log []reqlog.Request) string {
	m := map[string]int{}
	for _, q := range log {
		if q.Target != "/metrics" {
			m[q.Method+" "+q.Target+" "+strconv.Itoa(q.Status)]++
		}
	}
	return fmt.Sprint(m)
}

// TestReplayOverTLSAndH3: the same recording replayed to serve's https://
// face over HTTP/1.1 (verified with --cacert, or -k) and h2, and to its
// HTTP/3 face, arrives whole: the server's own record holds the
// recording's requests, method, target and status each as often, and
// over h3 its HTTP/3 counter counts each once.
func TestReplayOverTLSAndH3(t *testing.T) {
	dir := t.TempDir()
	rec := filepath.Join(dir, "rec.log")
	want := requestCounts(writeRecording(t, rec, 40))
	for _, c := range []struct {
		name, face string
		args       []string
	}{
		{"http1 cacert", "https", nil},
		{"http1 insecure", "https", []string{"-k"}},
		{"h2", "https", []string{"--transport", "h2", "--conns", "2"}},
		{"h3", "h3", []string{"--transport", "h3", "--conns", "2"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			sub := t.TempDir()
			cert, got := filepath.Join(sub, "cert.pem"), filepath.Join(sub, "got.log")
			faces, stop := serveFaces(t, "--https", "127.0.0.1:0", "--http3", "127.0.0.1:0",
				"--cert-out", cert, "--record", got, "--seed-users", "20")
			args := append([]string{"replay", rec, "--target", "https://" + faces[c.face], "--speed", "4", "-c", "4", "-q",
				"--out", filepath.Join(sub, "out.json")}, c.args...)
			if len(c.args) == 0 || c.args[0] != "-k" {
				args = append(args, "--cacert", cert)
			}
			code, stdout, errs := runCLI(t, args...)
			if code != 0 {
				t.Fatalf("%v: exit %d\n%s\n%s", args, code, stdout, errs)
			}
			res := readLoad(t, filepath.Join(sub, "out.json"))
			if res.Requests != 55 || res.Failed != 0 {
				t.Fatalf("result: %d requests, %d failed %v", res.Requests, res.Failed, res.Failures)
			}
			h3 := testkit.Metric(t, faces["http"], "wirebench_h3_requests_total")
			if code := stop(); code != 0 {
				t.Fatalf("serve exited %d", code)
			}
			if got := requestCounts(readReqlog(t, got)); got != want {
				t.Fatalf("recorded %s\nthe server received %s", want, got)
			}
			if wantH3 := map[bool]int64{true: 55}[c.face == "h3"]; h3 != wantH3 {
				t.Fatalf("wirebench_h3_requests_total %d, want %d", h3, wantH3)
			}
		})
	}
}

// writeReqlog writes reqs as a recording at path, 2 ms apart.
func writeReqlog(t *testing.T, path string, reqs []reqlog.Request) {
	t.Helper()
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	w := reqlog.NewWriter(f, reqlog.Options{})
	for i := range reqs {
		reqs[i].At = 1e18 + int64(i)*2e6
		if err := w.Write(&reqs[i]); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	f.Close()
}
