package main

import (
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/wirebench/wirebench/server"
)

// A flow runs from the command line; a flow file with a problem is one
// line naming file and line, exit 2, and not one request is sent.
func TestLoadFlowCLI(t *testing.T) {
	t.Parallel()
	var hits atomic.Int64
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("X-Run") == "1" { // -H reaches every step
			hits.Add(1)
		}
		switch r.URL.Path {
		case "/api/login":
			w.Header().Set("X-Token", "t-"+r.URL.Query().Get("u"))
			w.Write([]byte(`{"ok": true}`))
		case "/api/me":
			if r.Header.Get("Authorization") != "Bearer t-ada" {
				w.WriteHeader(401)
			}
		default:
			w.WriteHeader(404)
		}
	}))
	defer ts.Close()
	dir := t.TempDir()
	good := filepath.Join(dir, "f.yaml")
	os.WriteFile(good, []byte("flow:\n  - get:\n      url: /login?u={{.user}}\n      capture:\n        - header: X-Token\n          as: token\n  - get:\n      url: /me\n      headers:\n        Authorization: Bearer {{.token}}\n"), 0o644)
	data := filepath.Join(dir, "d.jsonl")
	os.WriteFile(data, []byte(`{"user": "ada"}`+"\n"), 0o644)
	code, out, errOut := runLoadCLI(t, "load", "-q", "--flow", good, "--data-file", data, "-c", "2", "-n", "10", "-H", "X-Run: 1", ts.URL+"/api")
	if code != 0 || !strings.Contains(out, "requests      20 ") || hits.Load() != 20 {
		t.Fatalf("exit %d, %d hits\n%s%s", code, hits.Load(), out, errOut)
	}

	bad := filepath.Join(dir, "bad.yaml")
	os.WriteFile(bad, []byte("flow:\n  - get:\n      url: /me\n      headers:\n        Authorization: Bearer {{.tokn}}\n"), 0o644)
	hits.Store(0)
	code, out, errOut = runLoadCLI(t, "load", "--flow", bad, "-H", "X-Run: 1", ts.URL)
	want := "wirebench load: flow: " + bad + ":5: step 1: headers: Authorization: {{.tokn}} is not a variable here"
	if code != 2 || !strings.HasPrefix(errOut, want) || strings.Count(errOut, "\n") != 1 || out != "" || hits.Load() != 0 {
		t.Fatalf("exit %d, %d hits, stderr %q, want exit 2, no request and one line %q", code, hits.Load(), errOut, want)
	}
	code, _, errOut = runLoadCLI(t, "load", "--flow", good, "-m", "POST", ts.URL)
	if code != 2 || !strings.Contains(errOut, "--method does not apply to --flow") {
		t.Fatalf("exit %d: %s", code, errOut)
	}
}

// The example flow of docs/flows.md runs against the reference server as
// the docs say: every step's checks pass, and what it creates it deletes.
func TestFlowExampleAgainstServe(t *testing.T) {
	t.Parallel()
	srv, err := server.Start(context.Background(), server.Options{HTTPAddr: "127.0.0.1:0", GRPCAddr: "127.0.0.1:0", SeedUsers: 10, SeedTodos: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	// --format runs the JSON flow in each of the API's formats: bodies
	// re-encoded, responses decoded for the captures and checks.
	for _, format := range []string{"json", "protobuf", "msgpack", "cbor", "toon"} {
		code, out, errOut := runLoadCLI(t, "load", "-q", "--flow", "../../examples/flows/users.yaml", "--data-file", "../../examples/flows/users.csv",
			"-c", "3", "-n", "30", "--format", format, "http://"+srv.HTTPAddr())
		if code != 0 || !strings.Contains(out, "iterations    30 ") || !strings.Contains(out, "requests      120 ") || !strings.Contains(out, "failed 0 (0.00%)") {
			t.Fatalf("--format %s: exit %d\n%s%s", format, code, out, errOut)
		}
		if u, _ := srv.Store.Len(); u != 10 {
			t.Errorf("--format %s: the store has %d users after the flows, want the 10 seeded", format, u)
		}
	}
}
