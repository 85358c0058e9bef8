package main

import (
	"bytes"
	"context"
	"errors"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/wirebench/wirebench/internal/testkit"
	"github.com/wirebench/wirebench/results"
)

// needRoot skips a test that sets up an emulated link (namespaces, TUN
// devices) unless it runs as root, as CI does.
func needRoot(t *testing.T) {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("--link needs root (network namespaces, TUN devices): run the tests as root, as CI does")
	}
}

func TestLinkUsage(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"load", "--link", "rtt=80", "http://127.0.0.1:1/"}, `wirebench load: --link: "rtt=80": want a duration with its unit, e.g. 40ms`},
		{[]string{"load", "--link", "3g,rate=2mbps", "http://127.0.0.1:1/"}, `"rate=2mbps": ambiguous unit`},
		{[]string{"capacity", "--slo", "p99<10ms", "--link", "sattelite", "http://127.0.0.1:1/"}, "did you mean satellite?"},
		{[]string{"link", "rtt=1ms"}, "want SPEC -- COMMAND"},
		{[]string{"link", "rtt=1ms", "true"}, "want SPEC -- COMMAND"},
	} {
		var out, errb bytes.Buffer
		code := run(context.Background(), &cliEnv{stdin: strings.NewReader(""), stdout: &out, stderr: &errb}, tc.args)
		if code != 2 || !strings.Contains(errb.String(), tc.want) {
			t.Errorf("%v: exit %d, stderr %q; want 2 and %q", tc.args, code, errb.String(), tc.want)
		}
	}
}

func TestLinkPresets(t *testing.T) {
	t.Parallel()
	var out bytes.Buffer
	if code := run(context.Background(), &cliEnv{stdout: &out, stderr: &out}, []string{"link", "presets"}); code != 0 {
		t.Fatalf("exit %d: %s", code, out.String())
	}
	for _, p := range []string{"3g ", "4g ", "lte-lossy ", "satellite ", "transatlantic ", "datacenter ", "WebPageTest"} {
		if !strings.Contains(out.String(), p) {
			t.Errorf("presets lack %q:\n%s", p, out.String())
		}
	}
}

// TestLinkNotRoot: without the privileges, one line says what is
// missing, exit 2.
func TestLinkNotRoot(t *testing.T) {
	needRoot(t) // to run the binary as another user
	bin := testkit.Binary(t)
	for _, args := range [][]string{
		{"link", "rtt=1ms", "--", "true"},
		{"load", "--link", "3g", "-n", "1", "http://127.0.0.1:1/"},
	} {
		cmd := exec.Command(bin, args...)
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}
		out, err := cmd.CombinedOutput()
		var ee *exec.ExitError
		if err != nil && !errors.As(err, &ee) {
			t.Skipf("cannot run the test binary as nobody (its folder is not theirs to read?): %v", err)
		}
		if !errors.As(err, &ee) || ee.ExitCode() != 2 || !strings.Contains(string(out), "needs root") || strings.Count(string(out), "\n") != 1 {
			t.Errorf("%v as nobody: %v\n%s\nwant exit 2 and one line saying it needs root", args, err, out)
		}
	}
}

// TestLinkLoadHTTP1: the load client across the link reaches the server
// here at 127.0.0.1 as written; every request takes at least the round
// trip; the result records the link and its calibration.
func TestLinkLoadHTTP1(t *testing.T) {
	needRoot(t)
	bin := testkit.Binary(t)
	addr, _ := startServe(t, bin)
	out := filepath.Join(t.TempDir(), "r.json")
	// --link-check=false: a busy machine may miss the tolerances (the
	// link package checks them in the timing step); the record is the test.
	cmd := exec.Command(bin, "load", "--link", "rtt=30ms,rate=20mbit", "--link-check=false", "-c", "2", "-n", "40", "--out", out, "http://"+addr+"/users/1")
	b, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%v\n%s", err, b)
	}
	rf, err := os.Open(out)
	if err != nil {
		t.Fatal(err)
	}
	defer rf.Close()
	res, err := results.ReadLoad(rf)
	if err != nil {
		t.Fatal(err)
	}
	if res.Requests != 40 || res.Failed != 0 {
		t.Errorf("%d requests, %d failed; want 40, 0\n%s", res.Requests, res.Failed, b)
	}
	if min := res.Latency.Min(); min < 30*time.Millisecond {
		t.Errorf("fastest request %v: shorter than the link's 30 ms round trip, so not across it", min)
	}
	l := res.Link
	if l == nil || l.Effective != "rtt=30ms,rate=20mbit" || l.Calibration == nil || l.Calibration.RTTUDP < 30*time.Millisecond || l.Calibration.DownGoodput == 0 {
		t.Errorf("result's link %+v: want the spec and a calibration", l)
	}
	for _, s := range []string{"link: rtt=30ms,rate=20mbit", "RTT       set 30", "link relay (the run): up "} {
		if !strings.Contains(string(b), s) {
			t.Errorf("output lacks %q:\n%s", s, b)
		}
	}
}

// TestLinkLoadH3Loss: HTTP/3 across a lossy link: QUIC recovers every
// loss, each request is checked, and the relay did drop packets.
func TestLinkLoadH3Loss(t *testing.T) {
	needRoot(t)
	bin := testkit.Binary(t)
	srv := startServeH3(t, bin)
	cmd := exec.Command(bin, "load", "--link", "rtt=10ms,loss=5%", "--link-calibrate=false", "--transport", "h3", "-k",
		"-c", "4", "-n", "200", "--expect-body-contains", `"id":1`, "https://"+srv.h3+"/users/1")
	b, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%v\n%s", err, b)
	}
	if !strings.Contains(string(b), "requests      200") || !strings.Contains(string(b), "failed 0 ") {
		t.Errorf("want 200 requests, none failed:\n%s", b)
	}
	if strings.Contains(string(b), "(0 lost, 0 queue drops), down") || strings.Contains(string(b), " (0 lost, 0 queue drops); ") {
		t.Errorf("a 5%% loss link lost nothing in one direction:\n%s", b)
	}
}

// TestLinkKilledLeavesNothing: `wirebench link` killed with SIGKILL
// leaves no device behind, and its command dies with it.
func TestLinkKilledLeavesNothing(t *testing.T) {
	needRoot(t)
	bin := testkit.Binary(t)
	before := ifaceNames(t)
	pidFile := filepath.Join(t.TempDir(), "pid")
	cmd := exec.Command(bin, "link", "rtt=1ms", "--link-calibrate=false", "--", "sh", "-c", "echo $$ > "+pidFile+"; exec sleep 60")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var child int
	for deadline := time.Now().Add(time.Minute); child == 0; time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the command did not start")
		}
		if b, err := os.ReadFile(pidFile); err == nil && len(b) > 1 {
			child = atoi(t, strings.TrimSpace(string(b)))
		}
	}
	if len(ifaceNames(t)) != len(before)+1 {
		t.Fatalf("interfaces %v while the link is up; before %v", ifaceNames(t), before)
	}
	cmd.Process.Kill()
	cmd.Wait()
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(20 * time.Millisecond) {
		gone := syscall.Kill(child, 0) != nil
		if gone && len(ifaceNames(t)) == len(before) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("after SIGKILL: command alive %v, interfaces %v (before %v)", !gone, ifaceNames(t), before)
		}
	}
}

func ifaceNames(t *testing.T) []string {
	t.Helper()
	ifs, err := net.Interfaces()
	if err != nil {
		t.Fatal(err)
	}
	var n []string
	for _, i := range ifs {
		n = append(n, i.Name)
	}
	return n
}

func atoi(t *testing.T, s string) int {
	t.Helper()
	n := 0
	for _, c := range s {
		if c < '0' || c > '9' {
			t.Fatalf("not a pid: %q", s)
		}
		n = n*10 + int(c-'0')
	}
	return n
}

// TestLinkNone: --link none is loopback, as without --link (no root
// needed, nothing recorded), and `wirebench link none` runs the command as it is.
func TestLinkNone(t *testing.T) {
	t.Parallel()
	var out, errb bytes.Buffer
	env := &cliEnv{stdin: strings.NewReader(""), stdout: &out, stderr: &errb}
	if code := run(context.Background(), env, []string{"link", "none", "--", "sh", "-c", "exit 3"}); code != 3 {
		t.Errorf("link none -- exit 3: exit %d, stderr %q", code, errb.String())
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ln.Close() // refused: the run fails to connect, over loopback, without asking for root
	out.Reset()
	errb.Reset()
	code := run(context.Background(), env, []string{"load", "--link", "none", "-n", "1", "http://" + ln.Addr().String() + "/"})
	if code != 1 || strings.Contains(errb.String(), "link") {
		t.Errorf("load --link none against a closed port: exit %d, stderr %q; want 1 and no link", code, errb.String())
	}
}
