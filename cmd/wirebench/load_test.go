package main

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/wirebench/wirebench/load"
	"github.com/wirebench/wirebench/server"
)

// runCLI runs the CLI as a function and returns its exit code and output.
func runLoadCLI(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	var out, errOut bytes.Buffer
	code := run(context.Background(), &cliEnv{stdin: strings.NewReader(""), stdout: &out, stderr: &errOut}, args)
	return code, out.String(), errOut.String()
}

func TestLoadRawCLI(t *testing.T) {
	t.Parallel()
	var hits atomic.Int64
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		if r.Method != "POST" || r.Header.Get("X-Test") != "yes" {
			w.WriteHeader(http.StatusBadRequest)
		}
		w.Write([]byte("pong"))
	}))
	defer ts.Close()
	dir := t.TempDir()
	body := filepath.Join(dir, "body.json")
	os.WriteFile(body, []byte(`{"ping":1}`), 0o644)

	tests := []struct {
		name     string
		args     []string
		code     int
		contains string
	}{
		{"ok with thresholds", []string{"-m", "POST", "-H", "X-Test: yes", "-b", "@" + body, "-c", "4", "-n", "200",
			"--expect-status", "200", "--expect-body-contains", "pong", "--threshold", "errors<1%", "--threshold", "p99<5s"}, 0, "✓ errors<1%"},
		{"goroutine engine", []string{"--engine", "goroutine", "-m", "POST", "-H", "X-Test: yes", "-n", "50"}, 0, "requests      50"},
		{"failed checks are data", []string{"-n", "20", "--threshold", "errors<1%"}, exitThreshold, "status 400"},
		{"threshold fails", []string{"-m", "POST", "-H", "X-Test: yes", "-n", "20", "--threshold", "rps>1000000000"}, exitThreshold, "✗ rps>1000000000"},
		{"bad threshold", []string{"-n", "1", "--threshold", "p99"}, 2, ""},
		{"bad segment", []string{"-n", "10", "--segment", "3/2"}, 2, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			args := append(append([]string{"load", "-q"}, tc.args...), ts.URL+"/")
			code, out, errOut := runLoadCLI(t, args...)
			if code != tc.code || !strings.Contains(out, tc.contains) {
				t.Errorf("exit %d (want %d); stdout lacks %q?\n%s\n%s", code, tc.code, tc.contains, out, errOut)
			}
		})
	}
	// Exactly one URL: none and two are usage errors that say so (a bogus
	// flag would fail as an unknown flag and prove nothing about the URL).
	for _, urls := range [][]string{nil, {ts.URL + "/", ts.URL + "/"}} {
		code, _, errOut := runLoadCLI(t, append([]string{"load", "-q", "-n", "1"}, urls...)...)
		if want := fmt.Sprintf("want exactly one URL argument, got %d", len(urls)); code != 2 || !strings.Contains(errOut, want) {
			t.Errorf("%d URLs: exit %d (want 2), stderr lacks %q:\n%s", len(urls), code, want, errOut)
		}
	}
}

// TestLoadSegmentsMerge: two segments written with --out merge to the
// whole run's request count, and the result files carry the schema and env.
func TestLoadSegmentsMerge(t *testing.T) {
	t.Parallel()
	var hits atomic.Int64
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { hits.Add(1) }))
	defer ts.Close()
	dir := t.TempDir()
	var files []string
	for _, seg := range []string{"1/2", "2/2"} {
		f := filepath.Join(dir, strings.ReplaceAll(seg, "/", "of")+".json")
		if code, out, errOut := runLoadCLI(t, "load", "-q", "-n", "101", "-c", "3", "--segment", seg, "--out", f, ts.URL); code != 0 {
			t.Fatalf("segment %s: exit %d\n%s%s", seg, code, out, errOut)
		}
		files = append(files, f)
	}
	code, out, errOut := runLoadCLI(t, append([]string{"merge"}, files...)...)
	if code != 0 {
		t.Fatalf("merge: exit %d: %s", code, errOut)
	}
	m, err := load.ReadResult(strings.NewReader(out))
	if err != nil {
		t.Fatal(err)
	}
	if m.Requests != 101 || hits.Load() != 101 || len(m.Segments) != 2 || m.Latency.Count() != 101 {
		t.Errorf("merged %d requests (server %d), segments %v, %d latencies", m.Requests, hits.Load(), m.Segments, m.Latency.Count())
	}
	if m.Env.GoVersion == "" || m.Env.NumCPU == 0 || m.Config["args"] == nil {
		t.Errorf("environment or configuration missing: %+v %v", m.Env, m.Config)
	}
}

// TestLoadScenarios drives the reference server with every scenario over
// every transport: no request may fail its checks, and the dataset must be
// the same size afterwards (fairness rule 1).
func TestLoadScenarios(t *testing.T) {
	srv, err := server.Start(context.Background(), server.Options{HTTPAddr: "127.0.0.1:0", GRPCAddr: "127.0.0.1:0", SeedUsers: 20, SeedTodos: 5})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	httpURL := "http://" + srv.HTTPAddr()
	ran := 0
	for _, sc := range []string{"crud", "echo", "get", "list", "create"} {
		for _, tr := range []struct{ transport, format, url string }{
			{"http1", "json", httpURL}, {"http1", "protobuf", httpURL}, {"http1", "msgpack", httpURL},
			{"h2c", "cbor", httpURL}, {"grpc", "", srv.GRPCAddr()},
		} {
			args := []string{"load", "-q", "--scenario", sc, "--transport", tr.transport, "-c", "3", "-n", "53", tr.url}
			if tr.format != "" {
				args = append(args, "--format", tr.format)
			}
			code, out, errOut := runLoadCLI(t, args...)
			if code != 0 || !strings.Contains(out, "failed 0 (0.00%)") {
				t.Errorf("%s over %s/%s: exit %d\n%s%s", sc, tr.transport, tr.format, code, out, errOut)
			}
			ran++
		}
	}
	if u, _ := srv.Store.Len(); u != 20 || ran != 25 {
		t.Errorf("after %d runs the store has %d users, want 20", ran, u)
	}
}
