package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/wirebench/wirebench/internal/testkit"
	"github.com/wirebench/wirebench/measure"
	"github.com/wirebench/wirebench/results"
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
		{"failed checks are data", []string{"-n", "20", "--threshold", "errors<1%"}, exitThreshold, "status 4xx (400×20)"},
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
	m, err := results.ReadLoad(strings.NewReader(out))
	if err != nil {
		t.Fatal(err)
	}
	if m.Requests != 101 || hits.Load() != 101 || len(m.Segments) != 2 || m.Latency.Count() != 101 {
		t.Errorf("merged %d requests (server %d), segments %v, %d latencies", m.Requests, hits.Load(), m.Segments, m.Latency.Count())
	}
	if m.Env.GoVersion == "" || m.Env.NumCPU == 0 || m.Config.Args == nil {
		t.Errorf("environment or configuration missing: %+v %v", m.Env, m.Config)
	}
}

// TestLoadGitOnlyForAResult: an unstamped binary (a test binary is one)
// asks git for its commit only when it writes a result: a run that only
// prints pays no git process, one with --out names the commit git
// reports. Not parallel: the probe count is the process's.
func TestLoadGitOnlyForAResult(t *testing.T) {
	testkit.NeedTool(t, "git", "apt-get install -y git")
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
	defer ts.Close()
	before := measure.GitProbes()
	if code, out, errOut := runLoadCLI(t, "load", "-q", "-n", "3", ts.URL); code != 0 {
		t.Fatalf("exit %d\n%s%s", code, out, errOut)
	}
	if n := measure.GitProbes() - before; n != 0 {
		t.Errorf("a run without --out asked git %d times", n)
	}
	f := filepath.Join(t.TempDir(), "r.json")
	if code, out, errOut := runLoadCLI(t, "load", "-q", "-n", "3", "--out", f, ts.URL); code != 0 {
		t.Fatalf("--out: exit %d\n%s%s", code, out, errOut)
	}
	if n := measure.GitProbes() - before; n != 1 {
		t.Errorf("a run with --out asked git %d times, want 1", n)
	}
	head, err := exec.Command("git", "rev-parse", "HEAD").Output()
	if err != nil {
		return // not in a repository: no commit to compare
	}
	r, err := os.Open(f)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	res, err := results.ReadLoad(r)
	if err != nil {
		t.Fatal(err)
	}
	if want := strings.TrimSpace(string(head)); res.Env.GitCommit != want {
		t.Errorf("--out's git commit %q, git says %q", res.Env.GitCommit, want)
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

// TestLoadExitStatus: the exit status tells the truth (issue 9): a target
// that cannot be reached or never succeeds is a failed run (1), a failed
// threshold 99, a good run 0 — in every engine.
func TestLoadExitStatus(t *testing.T) {
	t.Parallel()
	ok := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.Write([]byte("ok")) }))
	t.Cleanup(ok.Close) // not defer: the parallel subtests run after this returns
	notFound := httptest.NewServer(http.NotFoundHandler())
	t.Cleanup(notFound.Close)
	refused := "http://" + testkit.RefusedAddr(t) + "/"
	tests := []struct {
		name string
		args []string
		code int
		msg  string
	}{
		{"ok", []string{"-n", "20", ok.URL}, 0, ""},
		{"refused", []string{"-n", "20", refused}, 1, "no request succeeded: 20 of 20 failed: connection refused 100%"},
		{"refused timed", []string{"-d", "300ms", refused}, 1, ": connection refused 100%"},
		{"all 404", []string{"-n", "20", notFound.URL}, 1, "failed: status 4xx 100% (404×20)"},
		{"threshold", []string{"-n", "20", "--threshold", "p99<1ns", ok.URL}, exitThreshold, "thresholds failed"},
		{"threshold beats no success", []string{"-n", "5", "--threshold", "errors<1%", notFound.URL}, exitThreshold, "thresholds failed"},
	}
	for _, tc := range tests {
		for _, engine := range []string{"loop", "goroutine"} {
			t.Run(tc.name+"/"+engine, func(t *testing.T) {
				t.Parallel()
				args := append([]string{"load", "-q", "--engine", engine}, tc.args...)
				code, out, errOut := runLoadCLI(t, args...)
				if code != tc.code || !strings.Contains(errOut, tc.msg) {
					t.Errorf("exit %d (want %d), stderr %q (want %q)\n%s", code, tc.code, errOut, tc.msg, out)
				}
			})
		}
	}
}

// TestLoadFlags: flags as wrk, bombardier, hey and k6 users type them;
// contradictions refused with one line and a hint, not the usage text.
func TestLoadFlags(t *testing.T) {
	t.Parallel()
	var hits atomic.Int64
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { hits.Add(1) }))
	t.Cleanup(ts.Close)
	tests := []struct {
		name string
		args []string
		code int
		out  string // in stdout (code 0) or stderr
	}{
		{"glued", []string{"-c2", "-n7", ts.URL}, 0, "requests      7 "},
		{"glued duration", []string{"-c20", "-d300ms", ts.URL}, 0, "closed loop, 20 VUs"},
		// "-d 0.3" is 300ms (secondsHeader).
		{"seconds", []string{"-c", "1", "-d", "0.3", ts.URL}, 0, "300ms"},
		{"flags after URL", []string{ts.URL, "-n", "3"}, 0, "requests      3 "},
		{"latency", []string{"-n", "10", "--latency", ts.URL}, 0, "latency distribution"},
		{"percentiles", []string{"-n", "10", "--percentiles", "50,99.9", ts.URL}, 0, "99.9%"},
		{"version", []string{"--version"}, 0, "wirebench "},
		{"stages and -d", []string{"--stages", "1s:5", "-d", "5s", ts.URL}, 2, "--stages sets the run's length: drop -d; see 'wirebench load -h'"},
		{"stages and -r", []string{"--stages", "1s:5", "-r", "10", ts.URL}, 2, "--open"},
		{"zero VUs", []string{"-c", "0", ts.URL}, 2, "-c 0: want 1..10000"},
		{"bad duration", []string{"-d", "5x", ts.URL}, 2, `duration "5x"`},
		{"bad threshold", []string{"--threshold", "p99", ts.URL}, 2, "--threshold: "},
		{"unknown flag", []string{"--bogus", ts.URL}, 2, "unknown flag --bogus"},
		{"bad URL", []string{"-n", "1", "ftp://x/"}, 2, "URL"},
		{"cert without key", []string{"--cert", "c.pem", ts.URL}, 2, "--cert and --key go together"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			code, out, errOut := runLoadCLI(t, append([]string{"load", "-q"}, tc.args...)...)
			where := out
			if code != 0 {
				where = errOut
			}
			found := strings.Contains(where, tc.out)
			if tc.name == "seconds" {
				// The header's span is rounded to the millisecond: 300ms,
				// 301ms, or the window and its graceful stop apart.
				found = secondsHeader.MatchString(where)
			}
			if code != tc.code || !found {
				t.Fatalf("exit %d (want %d), want %q in\n%s\n%s", code, tc.code, tc.out, out, errOut)
			}
			if code == 2 {
				if strings.Count(strings.TrimSpace(errOut), "\n") != 0 || strings.Contains(errOut, "load: load:") ||
					strings.Contains(errOut, "invalid options") {
					t.Errorf("want one clean line, got %q", errOut)
				}
			}
		})
	}
}

// TestLoadHTTPS: a self-signed HTTPS server is loaded with -k (h2 picked
// by ALPN unless --transport says otherwise) and refused without it.
func TestLoadHTTPS(t *testing.T) {
	t.Parallel()
	ts := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.Write([]byte("ok")) }))
	ts.EnableHTTP2 = true
	ts.Config.ErrorLog = log.New(io.Discard, "", 0)
	ts.StartTLS()
	t.Cleanup(ts.Close)
	for _, tc := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"-k", "-n", "30"}, 0, "requests      30 "},
		{[]string{"--insecure", "--transport", "http1", "-c2", "-n30"}, 0, "requests      30 "},
		{[]string{"-n", "5"}, 1, "certificate"},
	} {
		code, out, errOut := runLoadCLI(t, append(append([]string{"load", "-q"}, tc.args...), ts.URL+"/")...)
		if code != tc.code || !strings.Contains(out+errOut, tc.want) {
			t.Errorf("%v: exit %d (want %d), want %q in\n%s%s", tc.args, code, tc.code, tc.want, out, errOut)
		}
	}
}

// secondsHeader matches a 300ms run's summary header: "rates over the 300ms
// window of -d (…)" or, when the graceful stop took under 1 ms, the elapsed
// time alone, rounded to 300ms or 301ms.
var secondsHeader = regexp.MustCompile(`rates over the 300ms window|VUs?, 30[01]ms\n`)

// TestLoadStopsAtDeadTarget: load against a port with nothing listening
// stops soon with the cause and exits 1, instead of sending failing
// requests for all of -d.
func TestLoadStopsAtDeadTarget(t *testing.T) {
	t.Parallel()
	refused := "http://" + testkit.RefusedAddr(t) + "/"
	for _, args := range [][]string{{"-d", "30s"}, {"-d", "30s", "-r", "200"}} {
		code, out, errOut := runLoadCLI(t, append(append([]string{"load", "-q"}, args...), refused)...)
		if code != 1 || !strings.Contains(errOut, "connection refused 100%") ||
			!strings.Contains(out, "WARNING: stopped after") || !strings.Contains(out, "failed (connection refused) and none succeeded") {
			t.Errorf("load %v: exit %d\nstdout %s\nstderr %s", args, code, out, errOut)
		}
	}
}

// TestLoadResultKeepsNoSecrets: a run given a bearer token, a cookie and
// an API key (in -H, the URL's query and its path) writes a result file
// that holds none of them, the command line readable with REDACTED in
// their place; the server got them all.
func TestLoadResultKeepsNoSecrets(t *testing.T) {
	t.Parallel()
	var got atomic.Value
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got.Store(r.Header.Get("Authorization") + " " + r.Header.Get("Cookie") + " " + r.URL.String())
	}))
	t.Cleanup(ts.Close)
	const bearer, cookie, key, pathTok = "tok-Zq81xv2LmNpq", "sess=c00k1e-v4lue-Zx9", "k3y-Abc123xyz789", "sk_live_51HqLyjWDarjtT1zdp7dc"
	f := filepath.Join(t.TempDir(), "r.json")
	target := ts.URL + "/keys/" + pathTok + "?api_key=" + key + "&page=2"
	code, out, errOut := runLoadCLI(t, "load", "-q", "-n", "3", "-H", "Authorization: Bearer "+bearer,
		"--header=Cookie: "+cookie, "--out", f, target)
	if code != 0 {
		t.Fatalf("exit %d\n%s%s", code, out, errOut)
	}
	if s, _ := got.Load().(string); !strings.Contains(s, bearer) || !strings.Contains(s, cookie) || !strings.Contains(s, key) || !strings.Contains(s, pathTok) {
		t.Fatalf("the server got %q: the credentials were not sent", s)
	}
	b, err := os.ReadFile(f)
	if err != nil {
		t.Fatal(err)
	}
	for _, secret := range []string{bearer, "c00k1e-v4lue", key, pathTok} {
		if strings.Contains(string(b), secret) {
			t.Errorf("the result file holds %q", secret)
		}
	}
	for _, kept := range []string{`"Authorization: REDACTED"`, `"--header=Cookie: REDACTED"`, "/keys/REDACTED?api_key=REDACTED\u0026page=2", `"-n"`} {
		if !strings.Contains(string(b), kept) && !strings.Contains(string(b), strings.ReplaceAll(kept, "\u0026", `\u0026`)) {
			t.Errorf("the result file lacks %s", kept)
		}
	}
}
