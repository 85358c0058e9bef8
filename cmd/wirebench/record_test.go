package main

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/wirebench/wirebench/internal/testkit"
	"github.com/wirebench/wirebench/load/replay/reqlog"
)

// Secrets a recording of authenticated traffic must not hold by default.
const (
	recToken  = "tok-3f9a1c77e2"
	recCookie = "sess-9b2e41d0aa"
	recAPIKey = "key-5c1d8e0f42"
	recValue  = "kv-value-7a0c3e19"
	recPass   = "pw-e4d1b7c93a"
)

// TestServeRecordKeepsNoSecrets: serve --record of authenticated traffic
// (a bearer token, a cookie, ?api_key=, a KV value, a JSON body's
// "password", the server's --auth-token in a path) holds none of them,
// and the file is the owner's alone. --record-secrets and
// --record-bodies keep them when asked.
func TestServeRecordKeepsNoSecrets(t *testing.T) {
	dir := t.TempDir()
	for _, c := range []struct {
		name string
		args []string
		keep bool
	}{
		{"default", nil, false},
		{"asked", []string{"--record-secrets", "--record-bodies"}, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			path := filepath.Join(dir, c.name+".log")
			url, stop := serveInProcess(t, append([]string{"--record", path, "--auth-token", recToken}, c.args...)...)
			for _, q := range []struct{ method, target, body string }{
				{"PUT", "/kv/greeting", recValue},
				{"GET", "/kv/greeting", ""},
				{"GET", "/users?api_key=" + recAPIKey + "&limit=2", ""},
				{"POST", "/users", `{"name":"Ada","email":"ada@example.com","password":"` + recPass + `"}`},
			} {
				req, _ := http.NewRequest(q.method, url+q.target, strings.NewReader(q.body))
				if q.body != "" {
					req.Header.Set("Content-Type", "application/octet-stream")
					if q.method == "POST" {
						req.Header.Set("Content-Type", "application/json")
					}
				}
				req.Header.Set("Authorization", "Bearer "+recToken)
				req.Header.Set("Cookie", "session="+recCookie)
				resp, err := http.DefaultClient.Do(req)
				if err != nil {
					t.Fatal(err)
				}
				io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				if resp.StatusCode >= 300 {
					t.Fatalf("%s %s: %s", q.method, q.target, resp.Status)
				}
			}
			// The server's --auth-token in a path, sent without it as a
			// header: known to serve, so redacted all the same.
			resp, err := http.Get(url + "/users/" + recToken)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			if code := stop(); code != 0 {
				t.Fatalf("serve exited %d", code)
			}
			raw, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			for _, s := range []string{recToken, recCookie, recAPIKey, recValue, recPass} {
				if got := strings.Contains(rawAndBodies(t, path, raw), s); got != c.keep {
					t.Errorf("recording holds %q: %v, want %v\n%s", s, got, c.keep, raw)
				}
			}
			if fi, err := os.Stat(path); err != nil || fi.Mode().Perm() != 0o600 {
				t.Errorf("mode %v (%v), want 0600", fi.Mode(), err)
			}
			log := readReqlog(t, path)
			if len(log) != 5 || !c.keep && (log[2].Target != "/users?api_key=REDACTED&limit=2" || log[4].Target != "/users/REDACTED") {
				t.Fatalf("recorded %+v", log)
			}
		})
	}
}

// rawAndBodies is the log's text with its bodies decoded (they are base64).
func rawAndBodies(t *testing.T, path string, raw []byte) string {
	t.Helper()
	s := string(raw)
	for _, q := range readReqlog(t, path) {
		s += "\n" + string(q.Body)
	}
	return s
}

// TestLoadRecordKeepsNoSecrets: load --record's log of a request with
// -H Authorization and ?token= holds neither.
func TestLoadRecordKeepsNoSecrets(t *testing.T) {
	url, _ := serveInProcess(t, "--seed-users", "3")
	path := filepath.Join(t.TempDir(), "sent.log")
	code, stdout, errs := runCLI(t, "load", "-q", "-n", "3", "-c", "1", "--record", path,
		"-H", "Authorization: Bearer "+recToken, "-H", "Cookie: a="+recCookie, url+"/users/1?token="+recAPIKey)
	if code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, stdout, errs)
	}
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{recToken, recCookie, recAPIKey} {
		if strings.Contains(string(raw), s) {
			t.Errorf("recording holds %q:\n%s", s, raw)
		}
	}
	if fi, err := os.Stat(path); err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("mode %v (%v), want 0600", fi.Mode(), err)
	}
	if log := readReqlog(t, path); len(log) != 3 {
		t.Fatalf("recorded %d requests, want 3", len(log))
	}
}

// TestRecordFileNeverClobbers: every --record (serve, load, replay)
// refuses an existing file without --force and never writes through a
// symlink; --force replaces a regular file with a new 0600 one.
func TestRecordFileNeverClobbers(t *testing.T) {
	url, _ := serveInProcess(t, "--seed-users", "3")
	dir := t.TempDir()
	rec := filepath.Join(dir, "in.log")
	if code, _, errs := runCLI(t, "load", "-q", "-n", "2", "-c", "1", "--record", rec, url+"/users/1"); code != 0 {
		t.Fatalf("load --record: exit %d: %s", code, errs)
	}
	victim := filepath.Join(dir, "victim")
	const precious = "precious, not a log\n"
	for _, c := range []struct {
		name string
		cmd  func(path string, force bool) []string
	}{
		{"load", func(path string, force bool) []string {
			a := []string{"load", "-q", "-n", "1", "-c", "1", "--record", path}
			if force {
				a = append(a, "--force")
			}
			return append(a, url+"/users/1")
		}},
		{"replay", func(path string, force bool) []string {
			a := []string{"replay", "-q", rec, "--target", url, "--record", path}
			if force {
				a = append(a, "--force")
			}
			return a
		}},
		{"serve", func(path string, force bool) []string {
			a := []string{"serve", "--http", "127.0.0.1:0", "--no-grpc", "--record", path}
			if force {
				a = append(a, "--force")
			}
			return a
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			existing := filepath.Join(dir, c.name+"-existing.log")
			link := filepath.Join(dir, c.name+"-link.log")
			dangling := filepath.Join(dir, c.name+"-dangling.log")
			if err := os.WriteFile(existing, []byte(precious), 0o644); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(victim, []byte(precious), 0o644); err != nil {
				t.Fatal(err)
			}
			if err := os.Symlink(victim, link); err != nil {
				t.Fatal(err)
			}
			if err := os.Symlink(filepath.Join(dir, c.name+"-created-through-link"), dangling); err != nil {
				t.Fatal(err)
			}
			for _, p := range []struct {
				path  string
				force bool
				want  string
			}{
				{existing, false, "exists"},
				{link, false, link + " is a symlink"},
				{link, true, link + " is a symlink"},
				{dangling, false, dangling + " is a symlink"},
				{dangling, true, dangling + " is a symlink"},
			} {
				code, errs := runBounded(t, c.cmd(p.path, p.force)...)
				if code != 2 && code != 1 || !strings.Contains(errs, p.want) {
					t.Errorf("%s --record %s (force %v): exit %d, want a refusal naming %q: %s", c.name, filepath.Base(p.path), p.force, code, p.want, errs)
				}
			}
			for _, p := range []string{existing, victim} {
				if b, _ := os.ReadFile(p); string(b) != precious {
					t.Errorf("%s changed: %q", p, b)
				}
			}
			if _, err := os.Lstat(filepath.Join(dir, c.name+"-created-through-link")); err == nil {
				t.Errorf("a file was created through the dangling symlink")
			}
			os.Remove(link)
			if c.name == "serve" {
				return // serve runs until stopped: its --force is TestServeRecordForce's
			}
			if code, _, errs := runCLI(t, c.cmd(existing, true)...); code != 0 {
				t.Fatalf("--force: exit %d: %s", code, errs)
			}
			b, _ := os.ReadFile(existing)
			fi, _ := os.Stat(existing)
			if !strings.HasPrefix(string(b), `{"wirebench":"`+reqlog.Version) || fi.Mode().Perm() != 0o600 {
				t.Errorf("--force left %v %q", fi.Mode(), b)
			}
		})
	}
}

// runBounded runs a command that may not end by itself (serve) for at
// most 10 s: a refusal returns at once.
func runBounded(t *testing.T, args ...string) (code int, stderr string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	var out, errb bytes.Buffer
	code = run(ctx, &cliEnv{stdin: strings.NewReader(""), stdout: &out, stderr: &errb}, args)
	return code, errb.String()
}

// TestServeRecordForce: serve --record --force replaces an existing log
// with a new 0600 one.
func TestServeRecordForce(t *testing.T) {
	path := filepath.Join(t.TempDir(), "old.log")
	if err := os.WriteFile(path, []byte("old\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, stop := serveInProcess(t, "--record", path, "--force")
	if code := stop(); code != 0 {
		t.Fatalf("serve exited %d", code)
	}
	b, _ := os.ReadFile(path)
	fi, _ := os.Stat(path)
	if !strings.HasPrefix(string(b), `{"wirebench":"`) || fi.Mode().Perm() != 0o600 {
		t.Fatalf("%v %q", fi.Mode(), b)
	}
}

// TestServeRecordKeptWhenKilled: what serve --record logged reaches the
// file while serve runs, not only when it stops: a serve that dies
// without its shutdown (SIGKILL, the OOM killer, a second SIGTERM or
// Ctrl-C during the shutdown, as `pkill` of serve and its `timeout`
// wrapper sends) keeps the recording up to about a second before. It
// used to be held in a 256 KiB buffer until the end: such a death left
// an empty file.
func TestServeRecordKeptWhenKilled(t *testing.T) {
	bin := testkit.Binary(t)
	path := filepath.Join(t.TempDir(), "rec.log")
	p, m := testkit.StartLine(t, exec.Command(bin, "serve", "--http", "127.0.0.1:0", "--no-grpc", "--record", path),
		regexp.MustCompile(`^listening http=(\S+)`), time.Minute)
	for range 3 {
		resp, err := http.Get("http://" + m[1] + "/users/1")
		if err != nil {
			t.Fatal(err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
	}
	// The flush is periodic: wait for it (a minute at most, on a busy
	// machine), then kill serve without a shutdown.
	deadline := time.Now().Add(time.Minute)
	for {
		raw, _ := os.ReadFile(path)
		if bytes.Count(raw, []byte("\n")) == 4 { // the header and 3 requests
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("a minute after 3 requests the recording holds %q", raw)
		}
		time.Sleep(50 * time.Millisecond)
	}
	p.Signal(syscall.SIGKILL)
	p.Wait()
	if log := readReqlog(t, path); len(log) != 3 || log[2].Target != "/users/1" {
		t.Fatalf("after SIGKILL the recording holds %+v", log)
	}
}
