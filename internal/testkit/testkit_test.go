package testkit

import (
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// recorder is a testing.TB that records Fatalf and Skipf and stops the
// goroutine, as the real ones do.
type recorder struct {
	testing.TB
	fatal, skip string
}

func (r *recorder) Helper() {}
func (r *recorder) Fatalf(f string, a ...any) {
	r.fatal = fmt.Sprintf(f, a...)
	runtime.Goexit()
}
func (r *recorder) Skipf(f string, a ...any) {
	r.skip = fmt.Sprintf(f, a...)
	runtime.Goexit()
}

func run(t *testing.T, f func(tb testing.TB)) *recorder {
	r := &recorder{TB: t}
	done := make(chan struct{})
	go func() { defer close(done); f(r) }()
	<-done
	return r
}

// TestNeedTool: found on PATH returns the path; missing fails under
// CI=true only and skips with the install hint otherwise (any other CI
// value is not CI).
func TestNeedTool(t *testing.T) {
	if p := NeedTool(t, "sh", "apt-get install -y dash"); !filepath.IsAbs(p) {
		t.Fatalf("sh at %q", p)
	}
	t.Setenv("GOBIN", t.TempDir())
	for _, tc := range []struct {
		ci          string
		fail, skips bool
	}{{"true", true, false}, {"", false, true}, {"1", false, true}, {"false", false, true}} {
		t.Setenv("CI", tc.ci)
		r := run(t, func(tb testing.TB) { NeedTool(tb, "no-such-tool-wb", "apt-get install -y wb-hint") })
		if (r.fatal != "") != tc.fail || (r.skip != "") != tc.skips {
			t.Errorf("CI=%q: fatal %q, skip %q", tc.ci, r.fatal, r.skip)
		}
		if msg := r.fatal + r.skip; !strings.Contains(msg, "apt-get install -y wb-hint") {
			t.Errorf("CI=%q: %q does not say how to install", tc.ci, msg)
		}
	}
}

// TestNeedToolGoBin: a tool `go install` put in GOBIN is found off PATH.
func TestNeedToolGoBin(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "wb-installed")
	if err := os.WriteFile(p, []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("GOBIN", dir)
	if got := NeedTool(t, "wb-installed", "go install wb"); got != p {
		t.Fatalf("got %q, want %q", got, p)
	}
}

func TestSwitches(t *testing.T) {
	for _, v := range []string{"", "0", "true"} {
		t.Setenv("WIREBENCH_TIMING", v)
		t.Setenv("WIREBENCH_PEERS", v)
		if Timing() || Peers() {
			t.Errorf("%q turns a switch on", v)
		}
		if r := run(t, func(tb testing.TB) { NeedTiming(tb) }); r.skip == "" {
			t.Errorf("NeedTiming with %q did not skip", v)
		}
		if r := run(t, func(tb testing.TB) { NeedPeers(tb) }); r.skip == "" {
			t.Errorf("NeedPeers with %q did not skip", v)
		}
	}
	t.Setenv("WIREBENCH_TIMING", "1")
	t.Setenv("WIREBENCH_PEERS", "1")
	if !Timing() || !Peers() {
		t.Error("1 does not turn the switches on")
	}
	if r := run(t, func(tb testing.TB) { NeedTiming(tb); NeedPeers(tb) }); r.skip != "" {
		t.Errorf("skipped: %s", r.skip)
	}
}

// TestRefusedAddr: connections are refused, and nobody else can listen
// on the port while the test holds it.
func TestRefusedAddr(t *testing.T) {
	addr := RefusedAddr(t)
	for range 3 {
		_, err := net.DialTimeout("tcp", addr, 5*time.Second)
		if !errors.Is(err, syscall.ECONNREFUSED) {
			t.Fatalf("dial %s: %v, want connection refused", addr, err)
		}
	}
	if ln, err := net.Listen("tcp", addr); err == nil {
		ln.Close()
		t.Fatalf("listened on the held port %s", addr)
	}
}

// TestListenerFile: a child serving on the inherited socket answers on
// the listener's address.
func TestListenerFile(t *testing.T) {
	ln := Listen(t)
	f := ListenerFile(t, ln)
	py := NeedTool(t, "python3", "apt-get install -y python3")
	cmd := exec.Command(py, "-c", `import socket
s = socket.socket(fileno=3)
c, _ = s.accept()
c.sendall(b"hi from the child\n")
c.close()`)
	cmd.ExtraFiles = []*os.File{f}
	p := Start(t, cmd)
	c, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(30 * time.Second))
	b, err := io.ReadAll(c)
	if err != nil || string(b) != "hi from the child\n" {
		t.Fatalf("read %q, %v; child output %s", b, err, p.Log())
	}
}

// TestStopKillsTheGroup: Stop ends the child and its own children, even
// one that ignores SIGTERM.
func TestStopKillsTheGroup(t *testing.T) {
	cmd := exec.Command("sh", "-c", `trap "" TERM; sleep 300 & echo child $!; wait`)
	p, m := StartLine(t, cmd, regexp.MustCompile(`^child (\d+)$`), 30*time.Second)
	grandchild, _ := strconv.Atoi(m[1])
	if err := syscall.Kill(grandchild, 0); err != nil {
		t.Fatalf("grandchild %d not running: %v", grandchild, err)
	}
	defer func(g time.Duration) { StopGrace = g }(StopGrace)
	StopGrace = 100 * time.Millisecond
	p.Stop()
	if err := syscall.Kill(grandchild, 0); !errors.Is(err, syscall.ESRCH) {
		// A zombie until its reaper (init) collects it: wait a little.
		deadline := time.Now().Add(10 * time.Second)
		for !errors.Is(err, syscall.ESRCH) && time.Now().Before(deadline) {
			time.Sleep(10 * time.Millisecond)
			err = syscall.Kill(grandchild, 0)
		}
		if !errors.Is(err, syscall.ESRCH) {
			t.Fatalf("grandchild %d survived Stop: %v", grandchild, err)
		}
	}
	select {
	case <-p.Done():
	default:
		t.Fatal("Done not closed after Stop")
	}
}

// TestStartLineExited: a process that exits without the line fails the
// test with its output.
func TestStartLineExited(t *testing.T) {
	r := run(t, func(tb testing.TB) {
		StartLine(tb, exec.Command("sh", "-c", "echo something else; echo oops >&2"), regexp.MustCompile(`^listening`), time.Minute)
	})
	if !strings.Contains(r.fatal, "exited") || !strings.Contains(r.fatal, "something else") || !strings.Contains(r.fatal, "oops") {
		t.Fatalf("fatal %q", r.fatal)
	}
}

func TestStartRedis(t *testing.T) {
	r := StartRedis(t, "--maxmemory", "10mb")
	pid, err := redisPid(r.Addr)
	if err != nil || pid != strconv.Itoa(r.Cmd.Process.Pid) {
		t.Fatalf("pid %q, %v; started %d", pid, err, r.Cmd.Process.Pid)
	}
	if r.URL() != "redis://"+r.Addr {
		t.Fatal(r.URL())
	}
}

func get(t *testing.T, url string) string {
	t.Helper()
	c := &http.Client{Timeout: 30 * time.Second}
	resp, err := c.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return fmt.Sprintf("%d %s", resp.StatusCode, b)
}

// TestStartNginx: nginx answers on every listener it inherited.
func TestStartNginx(t *testing.T) {
	addrs := StartNginx(t, nil, 2, func(dir string, addrs []string) string {
		return fmt.Sprintf(`server { listen %s; location / { return 200 "one\n"; } }
	server { listen %s; location / { return 200 "two\n"; } }`, addrs[0], addrs[1])
	})
	if got := get(t, "http://"+addrs[0]+"/"); got != "200 one\n" {
		t.Errorf("first: %q", got)
	}
	if got := get(t, "http://"+addrs[1]+"/"); got != "200 two\n" {
		t.Errorf("second: %q", got)
	}
}

func TestStartPythonHTTP(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "f.txt"), []byte("served\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	addr := StartPythonHTTP(t, nil, dir)
	if got := get(t, "http://"+addr+"/f.txt"); got != "200 served\n" {
		t.Fatalf("%q", got)
	}
}

// TestSourceHash: the key changes with a source file and not with a test
// file or a nested module.
func TestSourceHash(t *testing.T) {
	root := t.TempDir()
	write := func(rel, s string) {
		p := filepath.Join(root, rel)
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("go.mod", "module x\n")
	write("a.go", "package x\n")
	h0, err := sourceHash(root)
	if err != nil {
		t.Fatal(err)
	}
	same := func(want bool, what string) {
		h, err := sourceHash(root)
		if err != nil {
			t.Fatal(err)
		}
		if (h == h0) != want {
			t.Errorf("%s: hash changed %v", what, h != h0)
		}
		h0 = h
	}
	write("a_test.go", "package x\n")
	same(true, "a test file")
	write("sub/go.mod", "module y\n")
	write("sub/b.go", "package y\n")
	same(true, "a nested module")
	write("a.go", "package x // changed\n")
	same(false, "a source file")
	write("static/app.js", "1")
	same(false, "an embedded asset")
}

func TestPruneKeepsTheNewestBinaries(t *testing.T) {
	dir := t.TempDir()
	now := time.Now()
	touch := func(name string, age time.Duration) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, nil, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.Chtimes(p, now.Add(-age), now.Add(-age)); err != nil {
			t.Fatal(err)
		}
		return p
	}
	keep := touch("wirebench-keep", 0)
	touch("wirebench-keep.lock", 48*time.Hour)
	for i := range keepBinaries + 4 {
		touch(fmt.Sprintf("wirebench-%02d", i), time.Duration(i+1)*time.Minute)
		touch(fmt.Sprintf("wirebench-%02d.lock", i), time.Duration(i+1)*time.Minute)
	}
	touch("wirebench-stale", 25*time.Hour)
	touch("wirebench-stale.lock", 25*time.Hour)
	touch("wirebench-99.123.tmp", time.Minute)
	prune(dir, keep)
	var left []string
	ents, _ := os.ReadDir(dir)
	for _, e := range ents {
		left = append(left, e.Name())
	}
	want := []string{"wirebench-99.123.tmp", "wirebench-keep", "wirebench-keep.lock"}
	for i := range keepBinaries + 4 {
		if i < keepBinaries {
			want = append(want, fmt.Sprintf("wirebench-%02d", i))
		}
		want = append(want, fmt.Sprintf("wirebench-%02d.lock", i))
	}
	sort.Strings(want)
	if strings.Join(left, " ") != strings.Join(want, " ") {
		t.Errorf("after prune:\n got %v\nwant %v", left, want)
	}
}
