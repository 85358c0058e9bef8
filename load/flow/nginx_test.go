package flow

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/wirebench/wirebench/internal/testkit"
	"github.com/wirebench/wirebench/load"
	"github.com/wirebench/wirebench/results"
)

// TestFlowAgainstNginx runs a flow against a server nobody here wrote:
// a login whose JSON id and header token are captured, then a request
// using both. nginx's own access log holds exactly the requests the
// result counts, each second step with the id and token its first step
// got for that data row; a step whose check fails is counted with the
// step and check named, and its iteration goes no further.
func TestFlowAgainstNginx(t *testing.T) {
	if testing.Short() {
		t.Skip("runs nginx; skipped with -short")
	}
	var logPath string
	addrs := testkit.StartNginx(t, nil, 1, func(dir string, addrs []string) string {
		logPath = filepath.Join(dir, "access.log")
		return fmt.Sprintf(`	log_format flow '$request_method $request_uri $status "$http_authorization"';
	server {
		listen %s;
		access_log %s flow;
		default_type application/json;
		location = /api/login { add_header X-Token tok-$arg_u always; return 200 '{"user": {"name": "$arg_u", "id": $arg_id}}'; }
		location ~ ^/api/users/(\d+)$ { return 200 '{"id": $1, "auth": "$http_authorization"}'; }
		location / { return 404; }
	}
`, addrs[0], logPath)
	})
	dir := writeFiles(t, map[string]string{
		"f.yaml": `
flow:
  - get:
      name: login
      url: /login?u={{.user}}&id={{.uid}}
      capture:
        - json: $.user.id
          as: id
        - header: X-Token
          as: token
  - get:
      name: user
      url: /users/{{.id}}
      headers:
        Authorization: Bearer {{.token}}
      check:
        - json: $.auth
          equals: Bearer tok-{{.user}}
`,
		"users.csv": "user,uid\nada,7\nbob,8\n",
	})
	f, err := Load(filepath.Join(dir, "f.yaml"), filepath.Join(dir, "users.csv"))
	if err != nil {
		t.Fatal(err)
	}
	res := runFlow(t, f, "http://"+addrs[0]+"/api", load.Options{Options: results.Options{Concurrency: 4, Requests: 50}})
	if res.Failed != 0 || res.Requests != 100 || res.Iterations.Count != 50 {
		t.Fatalf("%d requests, %d failed (%v), %+v iterations; want 100, 0, 50", res.Requests, res.Failed, res.Failures, res.Iterations)
	}
	lines := nginxLines(t, logPath, 100)
	count := map[string]int{}
	for _, l := range lines {
		count[l]++
	}
	want := map[string]int{
		`GET /api/login?u=ada&id=7 200 "-"`:     25,
		`GET /api/login?u=bob&id=8 200 "-"`:     25,
		`GET /api/users/7 200 "Bearer tok-ada"`: 25,
		`GET /api/users/8 200 "Bearer tok-bob"`: 25,
	}
	for k, n := range want {
		if count[k] != n {
			t.Errorf("nginx logged %d × %s, want %d (all: %v)", count[k], k, n, count)
		}
	}

	// The second step to a path nginx does not have: 404 on every one.
	bad := strings.Replace(mustRead(t, filepath.Join(dir, "f.yaml")), "url: /users/{{.id}}", "url: /nope/{{.id}}", 1)
	os.WriteFile(filepath.Join(dir, "bad.yaml"), []byte(bad), 0o644)
	f, err = Load(filepath.Join(dir, "bad.yaml"), filepath.Join(dir, "users.csv"))
	if err != nil {
		t.Fatal(err)
	}
	os.Truncate(logPath, 0)
	res = runFlow(t, f, "http://"+addrs[0]+"/api", load.Options{Options: results.Options{Concurrency: 1, Requests: 6}})
	reason := `step 2 "user": status 404, want 2xx`
	if res.Failures[reason] != 6 || res.Ops[0].Failed != 0 || res.Ops[1].Failed != 6 || res.Iterations.Failed != 6 {
		t.Fatalf("failures %v, ops %+v, iterations %+v; want 6 × %q", res.Failures, res.Ops, res.Iterations, reason)
	}
	if got := nginxLines(t, logPath, 12); len(got) != int(res.Requests) {
		t.Errorf("nginx logged %d, the result counts %d", len(got), res.Requests)
	}
}

// nginxLines waits (a guard, not a measurement) until nginx logged n
// lines, which it writes after each response, and returns them.
func nginxLines(t *testing.T, path string, n int) []string {
	t.Helper()
	for deadline := time.Now().Add(time.Minute); ; {
		b, _ := os.ReadFile(path)
		lines := strings.Split(strings.TrimSpace(string(b)), "\n")
		if len(b) == 0 {
			lines = nil
		}
		if len(lines) >= n || time.Now().After(deadline) {
			if len(lines) != n {
				t.Fatalf("%s: %d lines, want %d:\n%s", path, len(lines), n, b)
			}
			return lines
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func mustRead(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
