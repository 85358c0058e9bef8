package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/wirebench/wirebench/internal/testkit"
	"github.com/wirebench/wirebench/results"
)

// TestPeerLoadBesideWrk runs `wirebench load` beside wrk against servers
// nobody here wrote — nginx with keep-alive, nginx with
// keepalive_timeout 0 (Connection: close on every response) and python's
// http.server (HTTP/1.0, a close per response; and with a 16 MiB POST,
// which it answers 501 without reading the body before it hangs up) — and
// fails if wirebench counts any failure or measures less than 0.8× wrk's
// req/s (issue 9: phantom "timeout" failures and collapsed rates against
// such servers; every POST was a "connection reset" failure before).
//
// Each run is 1 s, so the test takes about 8 s (more if a pair is rerun). It holds the machine's
// load lock (/tmp/wirebench-load.lock) itself: do not wrap it in flock.
func TestPeerLoadBesideWrk(t *testing.T) {
	testkit.NeedPeers(t) // slow: CI's peer step (docs/testing.md)
	if testing.Short() {
		t.Skip("load runs; skipped with -short")
	}
	wrk := testkit.NeedTool(t, "wrk", "apt-get install -y wrk")
	testkit.NeedTool(t, "nginx", "apt-get install -y nginx")
	testkit.NeedTool(t, "python3", "apt-get install -y python3")
	bin := testkit.Binary(t)
	unlock := loadLock(t)
	defer unlock()

	// Client on CPU 0, server on CPU 1, as the held-out runs do; with one
	// CPU (or no taskset) everything shares it and the ratio still holds.
	client, server := pinning()
	// The body python answers 501 to without reading it.
	dir := t.TempDir()
	body, script := filepath.Join(dir, "body"), filepath.Join(dir, "post.lua")
	if err := os.WriteFile(body, make([]byte, 16<<20), 0o644); err != nil {
		t.Fatal(err)
	}
	lua := fmt.Sprintf("wrk.method = \"POST\"\nlocal f = io.open(%q, \"rb\")\nwrk.body = f:read(\"*a\")\nf:close()\n", body)
	if err := os.WriteFile(script, []byte(lua), 0o644); err != nil {
		t.Fatal(err)
	}
	post := []string{"-m", "POST", "-b", "@" + body, "--expect-status", "501"}
	servers := []struct {
		name    string
		start   func(t *testing.T) string
		conns   string
		wrkArgs []string // extra arguments to wrk
		wbArgs  []string // and to wirebench load
		ratio   float64  // wirebench's req/s must be at least this × wrk's
		// lost: the share of requests whose response the server may
		// destroy (see the 16 MiB POST), counted as a reset or a close
		// mid-response and nothing else; 0 for the servers that never do.
		lost float64
	}{
		{"nginx keep-alive", func(t *testing.T) string { return startNginx(t, server, "65") }, "10", nil, nil, 0.8, 0},
		{"nginx keepalive_timeout 0", func(t *testing.T) string { return startNginx(t, server, "0") }, "10", nil, nil, 0.8, 0},
		// http.server's listen backlog is 5: more connections than that
		// measure SYN retransmits (1 s each), for wrk and us alike.
		{"python http.server", func(t *testing.T) string { return startPython(t, server) }, "4", nil, nil, 0.8, 0},
		// Counts only: each request copies some MB into a socket buffer
		// that the server's reset throws away (about 3.6 MB accepted by
		// write(2), 129 KB reaching loopback, for wrk and us alike): the
		// rate measures that copy on the client's CPU, not the server.
		// The server closes with the body unread, so its kernel resets
		// the connection and drops whatever of the 501 it had not sent
		// yet: with both CPUs busy, about 1 in 1,300 responses goes so
		// (wrk counted a socket error in the same run; CI 2026-11-30).
		// Those count as "closed mid-response" or "connection reset";
		// issue 9's bug failed every POST.
		{"python http.server, 16 MiB POST answered 501 unread", func(t *testing.T) string { return startPython(t, server) }, "4", []string{"-s", script}, post, 0, 0.01},
	}
	for _, sv := range servers {
		t.Run(sv.name, func(t *testing.T) {
			url := sv.start(t)
			// A rate is noisy on a shared 2-core box (other test packages
			// run beside this one): a pair of back-to-back runs under ratio
			// is measured again, up to three pairs. A failure counted by
			// wirebench fails at once (beyond the server's own losses,
			// sv.lost): that is never noise.
			for attempt := 1; ; attempt++ {
				wrkRPS, wrkErrs := runWrk(t, slices.Concat(client, []string{wrk, "-t1", "-c" + sv.conns, "-d1s"}, sv.wrkArgs, []string{url}))
				res := runWirebench(t, slices.Concat(client, []string{bin, "load", "-q", "-c" + sv.conns, "-d1s"}, sv.wbArgs, []string{"--out"}), url)
				got := res.RPS()
				t.Logf("%s, pair %d: wrk %.0f req/s (%s), wirebench %.0f req/s, %d requests, failures %v",
					sv.name, attempt, wrkRPS, wrkErrs, got, res.Requests, res.Failures)
				if res.Requests == 0 || !serverLosses(res, sv.lost) {
					t.Fatalf("wirebench: %d of %d failed: %v", res.Failed, res.Requests, res.Failures)
				}
				if got >= sv.ratio*wrkRPS {
					return
				}
				if attempt == 3 {
					t.Fatalf("wirebench %.0f req/s < %.1f × wrk's %.0f in three pairs of runs", got, sv.ratio, wrkRPS)
				}
			}
		})
	}
}

// serverLosses reports whether res's failures are all ones a server's
// reset makes (a reset, a close mid-response), at most share of its
// requests.
func serverLosses(res *results.Load, share float64) bool {
	if float64(res.Failed) > share*float64(res.Requests) {
		return false
	}
	for reason := range res.Failures {
		if reason != "connection reset" && reason != "closed mid-response" {
			return false
		}
	}
	return true
}

// loadLock takes the machine's load lock, shared with `flock
// /tmp/wirebench-load.lock cmd`, so that load runs do not overlap.
func loadLock(t *testing.T) func() {
	f, err := os.OpenFile("/tmp/wirebench-load.lock", os.O_CREATE|os.O_RDWR, 0o666)
	if err != nil {
		t.Fatal(err)
	}
	if err := unix.Flock(int(f.Fd()), unix.LOCK_EX); err != nil {
		f.Close()
		t.Fatal(err)
	}
	return func() { f.Close() } // closing releases the lock
}

// pinning returns the command prefix pinning a client to CPU 0 and one
// pinning a server to CPU 1, or none when that is not possible.
func pinning() (client, server []string) {
	ts, err := exec.LookPath("taskset")
	if err != nil || runtime.NumCPU() < 2 {
		return nil, nil
	}
	return []string{ts, "-c", "0"}, []string{ts, "-c", "1"}
}

// startNginx runs nginx answering 200 "hello" to everything.
func startNginx(t *testing.T, pin []string, keepalive string) string {
	addrs := testkit.StartNginx(t, pin, 1, func(dir string, addrs []string) string {
		return fmt.Sprintf(`	keepalive_timeout %s;
	keepalive_requests 1000000;
	server {
		listen %s;
		location / { default_type text/plain; return 200 "hello\n"; }
	}`, keepalive, addrs[0])
	})
	return "http://" + addrs[0] + "/"
}

// startPython runs python's http.server (HTTP/1.0) serving a small file.
func startPython(t *testing.T, pin []string) string {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "index.html"), []byte("hello\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	return "http://" + testkit.StartPythonHTTP(t, pin, dir) + "/index.html"
}

var (
	wrkRPSRE    = regexp.MustCompile(`Requests/sec:\s+([0-9.]+)`)
	wrkErrorsRE = regexp.MustCompile(`Socket errors:[^\n]*|Non-2xx[^\n]*`)
)

// runWrk runs wrk and returns its req/s and its error lines.
func runWrk(t *testing.T, argv []string) (float64, string) {
	out, err := exec.Command(argv[0], argv[1:]...).CombinedOutput()
	if err != nil {
		t.Fatalf("wrk: %v\n%s", err, out)
	}
	m := wrkRPSRE.FindSubmatch(out)
	if m == nil {
		t.Fatalf("wrk output:\n%s", out)
	}
	rps, _ := strconv.ParseFloat(string(m[1]), 64)
	errs := strings.Join(wrkErrorsRE.FindAllString(string(out), -1), "; ")
	if errs == "" {
		errs = "no errors"
	}
	return rps, errs
}

// runWirebench runs the load command (argv ends with --out) and reads its
// result file.
func runWirebench(t *testing.T, argv []string, url string) *results.Load {
	f := filepath.Join(t.TempDir(), "result.json")
	argv = append(argv, f, url)
	out, err := exec.Command(argv[0], argv[1:]...).CombinedOutput()
	if err != nil {
		t.Errorf("wirebench: %v\n%s", err, out)
	}
	rf, err := os.Open(f)
	if err != nil {
		t.Fatalf("result: %v\n%s", err, out)
	}
	defer rf.Close()
	res, err := results.ReadLoad(rf)
	if err != nil {
		t.Fatal(err)
	}
	return res
}
