package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
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
		// An unset "$SPEC" ran the command on loopback, silently.
		{[]string{"link", "", "--", "true"}, `an empty SPEC: write none to run COMMAND without a link`},
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

// asNobody makes cmd run unprivileged: as nobody when the tests run as
// root, else as the tests' own user.
func asNobody(cmd *exec.Cmd) {
	if os.Geteuid() == 0 {
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}
	}
}

// TestLinkUnprivileged: not root, where the kernel allows user
// namespaces, --link and wirebench link run in namespaces of their own
// and reach the servers on the host's loopback through the link.
func TestLinkUnprivileged(t *testing.T) {
	bin := testkit.Binary(t)
	addr, _ := startServe(t, bin)
	dir := openTempDir(t, "wirebench-userns")
	out := filepath.Join(dir, "r.json")
	cmd := exec.Command(bin, "load", "--link", "rtt=30ms", "--link-check=false", "-c", "2", "-n", "20", "--out", out, "http://"+addr+"/users/1")
	asNobody(cmd)
	b, err := cmd.CombinedOutput()
	var ee *exec.ExitError
	if err != nil && !errors.As(err, &ee) {
		t.Skipf("cannot run the test binary unprivileged (its folder is not theirs to read?): %v", err)
	}
	if err != nil && ee.ExitCode() == 2 && strings.Contains(string(b), "user namespace") {
		t.Skipf("this kernel refuses unprivileged user namespaces (TestLinkUnprivilegedRefused checks the message): %s", b)
	}
	if err != nil {
		t.Fatalf("load --link unprivileged: %v\n%s", err, b)
	}
	res := readLoad(t, out)
	if res.Requests != 20 || res.Failed != 0 {
		t.Errorf("%d requests, %d failed; want 20, 0\n%s", res.Requests, res.Failed, b)
	}
	if min := res.Latency.Min(); min < 30*time.Millisecond {
		t.Errorf("fastest request %v: shorter than the link's 30 ms round trip, so not across it", min)
	}
	if l := res.Link; l == nil || l.Calibration == nil || l.Calibration.RTTTCP < 30*time.Millisecond || l.Calibration.DownGoodput == 0 {
		t.Errorf("result's link %+v: want the spec and a calibration", l)
	}
	checkRelayFigures(t, res, out, string(b))
	// wirebench link: the command's exit status is passed on; a port
	// nothing listens on is refused across the link as on the host.
	cmd = exec.Command(bin, "link", "rtt=10ms", "--link-calibrate=false", "--", "sh", "-c",
		`curl -s -o /dev/null -m 5 http://127.0.0.1:1/; echo "refused $?"; exit 3`)
	asNobody(cmd)
	b, err = cmd.CombinedOutput()
	if !errors.As(err, &ee) || ee.ExitCode() != 3 {
		t.Errorf("link -- sh -c 'exit 3' unprivileged: %v, want exit 3\n%s", err, b)
	}
	if _, cerr := exec.LookPath("curl"); cerr == nil && !strings.Contains(string(b), "refused 7") {
		t.Errorf("curl to a closed port across the link: want refused (7)\n%s", b)
	}
}

// TestStudyLinksUnprivileged: a study's links axis, not root: the whole
// study runs in namespaces of its own, its servers there too, and every
// request on the link takes the round trip.
func TestStudyLinksUnprivileged(t *testing.T) {
	bin := testkit.Binary(t)
	dir := openTempDir(t, "wirebench-userns")
	file := filepath.Join(dir, "s.yaml")
	if err := os.WriteFile(file, []byte(`name: links
question: "Does the link cost a round trip?"
answer: {cell: keep-alive, yes: worse}
trials: 1
warmup: 200ms
duration: 500ms
server:
  command: ["{wirebench}", "serve", "--http", "127.0.0.1:{port}", "--no-grpc", "--seed-users", "10"]
  ready: "http://127.0.0.1:{port}/healthz"
load: {url: "http://127.0.0.1:{port}/users/1", concurrency: 2, expect_body_contains: '"id":1,'}
links: ["rtt=20ms"]
cells:
  - name: keep-alive
`), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "out")
	cmd := exec.Command(bin, "study", "run", file, "--link-check=false", "--out", out)
	asNobody(cmd)
	b, err := cmd.CombinedOutput()
	var ee *exec.ExitError
	if err != nil && !errors.As(err, &ee) {
		t.Skipf("cannot run the test binary unprivileged: %v", err)
	}
	if err != nil && ee.ExitCode() == 2 && strings.Contains(string(b), "user namespace") {
		t.Skipf("this kernel refuses unprivileged user namespaces: %s", b)
	}
	if err != nil {
		t.Fatalf("study with links unprivileged: %v\n%s", err, b)
	}
	runs, _ := filepath.Glob(filepath.Join(out, "links-*", "results.json"))
	if len(runs) != 1 {
		t.Fatalf("results: %v\n%s", runs, b)
	}
	res, err := results.ReadFile(runs[0])
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Links) != 1 || res.Links[0].Calibration == nil || res.Links[0].Calibration.RTTUDP < 20*time.Millisecond || len(res.Trials) != 1 {
		t.Fatalf("links %+v, %d trials: want rtt=20ms calibrated, one trial", res.Links, len(res.Trials))
	}
	tr := res.Trials[0]
	if tr.Error != "" || tr.Load == nil || tr.Load.Requests == 0 || tr.Load.Failed != 0 || tr.Load.Latency.Min() < 20*time.Millisecond {
		t.Errorf("trial %s: %q, %+v: want every request across the link's 20 ms", tr.Cell, tr.Error, tr.Load)
	}
}

// TestLinkUnprivilegedRefused: not root, where the kernel refuses user
// namespaces (user.max_user_namespaces 0, set in a user namespace of the
// test's own), one line says what is missing and how to get it, exit 2.
func TestLinkUnprivilegedRefused(t *testing.T) {
	needRoot(t) // to map nobody into the user namespace that sets the limit
	setpriv := testkit.NeedTool(t, "setpriv", "apt-get install util-linux")
	bin := testkit.Binary(t)
	nobody := []string{setpriv, "--reuid=65534", "--regid=65534", "--clear-groups"}
	for _, args := range [][]string{
		append(nobody, bin, "link", "rtt=1ms", "--", "true"),
		append(nobody, bin, "load", "--link", "3g", "-n", "1", "http://127.0.0.1:1/"),
		// Root of a user namespace that does not own the network
		// namespace (unshare -r, a rootless container): its link's
		// namespace cannot be left; exit 1 and "back to the original
		// namespace: operation not permitted" before.
		{bin, "link", "rtt=1ms", "--", "true"},
	} {
		cmd := exec.Command("sh", append([]string{"-c", `echo 0 > /proc/sys/user/max_user_namespaces && exec "$@"`, "sh"}, args...)...)
		ids := []syscall.SysProcIDMap{{ContainerID: 0, HostID: 0, Size: 1}, {ContainerID: 65534, HostID: 65534, Size: 1}}
		cmd.SysProcAttr = &syscall.SysProcAttr{Cloneflags: syscall.CLONE_NEWUSER, UidMappings: ids, GidMappings: ids, GidMappingsEnableSetgroups: true}
		out, err := cmd.CombinedOutput()
		var ee *exec.ExitError
		if err != nil && !errors.As(err, &ee) {
			t.Skipf("cannot run the test binary as nobody in a user namespace: %v", err)
		}
		if !errors.As(err, &ee) || ee.ExitCode() != 2 || !strings.Contains(string(out), "needs root") ||
			!strings.Contains(string(out), "user.max_user_namespaces is 0 (sysctl -w user.max_user_namespaces=") || strings.Count(string(out), "\n") != 1 {
			t.Errorf("%v in a user namespace, user namespaces refused: %v\n%s\nwant exit 2 and one line saying what is missing", args, err, out)
		}
		if testing.Verbose() {
			t.Logf("%s", out)
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
	res := readLoad(t, out)
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
	for _, s := range []string{"link: rtt=30ms,rate=20mbit", "RTT       set 30"} {
		if !strings.Contains(string(b), s) {
			t.Errorf("output lacks %q:\n%s", s, b)
		}
	}
	checkRelayFigures(t, res, out, string(b))
}

// checkRelayFigures: a load --link --out result (res, read from file;
// output the command's) holds what the relay did over the run, as a
// study's trials do, consistent with the run: a packet up at least for
// every request, the IP bytes each way at least the socket's bytes; the
// summary prints them once (not also the relay's own line after the
// command), and the report of the file shows them in its Links table.
func checkRelayFigures(t *testing.T, res *results.Load, file, output string) {
	t.Helper()
	if res.Link == nil || res.Link.Relay == nil {
		t.Fatalf("result's link %+v: no relay figures for the run", res.Link)
	}
	r := res.Link.Relay
	if r.UpPackets < res.Requests || r.DownPackets < res.Requests || r.CPUPerPacket <= 0 {
		t.Errorf("relay %+v: want a packet each way at least for each of the %d requests, and its CPU per packet", r, res.Requests)
	}
	if res.Bytes.WireOut == 0 || r.UpBytes < res.Bytes.WireOut || r.DownBytes < res.Bytes.WireIn {
		t.Errorf("relay carried %d bytes up, %d down; the client's sockets sent %d, received %d: want at least those",
			r.UpBytes, r.DownBytes, res.Bytes.WireOut, res.Bytes.WireIn)
	}
	if n := strings.Count(output, "the run   up "); n != 1 || strings.Contains(output, "link relay (the run)") {
		t.Errorf("want the relay's figures once, in the summary's link section (%d):\n%s", n, output)
	}
	var md, errb bytes.Buffer
	if code := run(context.Background(), &cliEnv{stdout: &md, stderr: &errb}, []string{"report", file}); code != 0 {
		t.Fatalf("report %s: exit %d: %s", file, code, errb.String())
	}
	want := fmt.Sprintf("| %s · %s · %s | no |", results.FormatInt(r.UpLost+r.DownLost), results.FormatInt(r.UpQueueDrops+r.DownQueueDrops), results.FormatInt(r.KernelDrops))
	if r.Limited != "" {
		want = "| YES: " + r.Limited + " |"
	}
	for _, s := range []string{"relay CPU/packet (the run)", "dropped: link loss · queue · kernel", want} {
		if !strings.Contains(md.String(), s) {
			t.Errorf("report of %s lacks %q:\n%s", file, s, md.String())
		}
	}
}

// TestLinkCapacityReplayRecordRelay: capacity --link and replay --link
// record the relay's figures for their run in --out too, as load does
// (TestLinkLoadHTTP1): at least a packet up for each request of the
// answer's step, or of the recording, and its bytes.
func TestLinkCapacityReplayRecordRelay(t *testing.T) {
	needRoot(t)
	bin := testkit.Binary(t)
	addr, _ := startServe(t, bin)
	dir := t.TempDir()
	var rec strings.Builder
	for i := range 20 { // 20 requests 5 ms apart, stamped with $msec
		fmt.Fprintf(&rec, "127.0.0.1 - - [30/Nov/2026:03:00:00 +0000] \"GET /users/1 HTTP/1.1\" 200 100 \"-\" \"curl\" %.3f\n", 1764471600+float64(i)/200)
	}
	log := filepath.Join(dir, "access.log")
	if err := os.WriteFile(log, []byte(rec.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	capOut, replayOut := filepath.Join(dir, "cap.json"), filepath.Join(dir, "replay.json")
	for _, args := range [][]string{
		{"capacity", "--link", "rtt=2ms", "--link-calibrate=false", "--slo", "p99<2s", "--start-rate", "50", "--max-rate", "50",
			"--step-duration", "200ms", "--warmup", "0", "--no-confirm", "--out", capOut, "http://" + addr + "/users/1"},
		{"replay", log, "--format", "combined", "--target", "http://" + addr, "--link", "rtt=2ms", "--link-calibrate=false", "--out", replayOut},
	} {
		if b, err := exec.Command(bin, args...).CombinedOutput(); err != nil {
			t.Fatalf("%s: %v\n%s", args[0], err, b)
		}
	}
	c := readCapacity(t, capOut)
	for name, run := range map[string]struct {
		l *results.Link
		r *results.Load
	}{"capacity": {c.Link, c.TrialLoad()}, "replay": {readLoad(t, replayOut).Link, readLoad(t, replayOut)}} {
		if run.l == nil || run.l.Relay == nil || run.r == nil {
			t.Errorf("%s: link %+v: no relay figures for the run", name, run.l)
			continue
		}
		rl := run.l.Relay
		if run.r.Requests == 0 || rl.UpPackets < run.r.Requests || rl.UpBytes < run.r.Bytes.WireOut || rl.DownBytes < run.r.Bytes.WireIn {
			t.Errorf("%s: relay %+v; want at least a packet up for each of %d requests, and %d bytes up, %d down", name, rl, run.r.Requests, run.r.Bytes.WireOut, run.r.Bytes.WireIn)
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
	dir := t.TempDir()
	pidFile := filepath.Join(dir, "pid")
	cmd := exec.Command(bin, "link", "rtt=1ms", "--link-calibrate=false", "--", "sh", "-c", "echo $$ > "+pidFile+"; exec sleep 60")
	out := startToFile(t, cmd, dir)
	child := waitPID(t, pidFile, out)
	if ours := linkIfaces(t, cmd.Process.Pid); len(ours) != 1 {
		t.Fatalf("the link's interfaces on the host while it is up: %v, want one (all: %v)", ours, ifaceNames(t))
	}
	cmd.Process.Kill()
	cmd.Wait()
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(20 * time.Millisecond) {
		gone := syscall.Kill(child, 0) != nil
		left := linkIfaces(t, cmd.Process.Pid)
		if gone && len(left) == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("after SIGKILL: command alive %v, the link's interfaces %v", !gone, left)
		}
	}
}

// TestLinkUnprivilegedKilledLeavesNothing: unprivileged, the link's
// devices are in namespaces of its own (none on the host), and SIGKILL
// to wirebench ends the command it ran.
func TestLinkUnprivilegedKilledLeavesNothing(t *testing.T) {
	bin := testkit.Binary(t)
	dir := openTempDir(t, "wirebench-userns")
	pidFile := filepath.Join(dir, "pid")
	cmd := exec.Command(bin, "link", "rtt=1ms", "--link-calibrate=false", "--", "sh", "-c", "echo $$ > "+pidFile+"; exec sleep 300")
	asNobody(cmd)
	// A file, not a pipe: a process left alive holding a pipe would hold
	// up Wait.
	outf, err := os.Create(filepath.Join(dir, "out"))
	if err != nil {
		t.Fatal(err)
	}
	defer outf.Close()
	cmd.Stdout, cmd.Stderr = outf, outf
	out := func() string { b, _ := os.ReadFile(outf.Name()); return string(b) }
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
		if cmd.ProcessState == nil && syscall.Kill(cmd.Process.Pid, 0) != nil {
			break
		}
	}
	if child == 0 {
		cmd.Wait()
		if strings.Contains(out(), "user namespace") {
			t.Skipf("this kernel refuses unprivileged user namespaces: %s", out())
		}
		t.Fatalf("wirebench link ended before its command started: %s", out())
	}
	for _, pid := range append(childPIDs(cmd.Process.Pid), cmd.Process.Pid) {
		if ours := linkIfaces(t, pid); len(ours) > 0 {
			t.Errorf("interfaces %v of process %d on the host while the link is up", ours, pid)
		}
	}
	cmd.Process.Kill()
	cmd.Wait()
	for deadline := time.Now().Add(30 * time.Second); syscall.Kill(child, 0) == nil; time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			syscall.Kill(child, syscall.SIGKILL)
			t.Fatalf("30 s after SIGKILL the command lives on")
		}
	}
}

// linkIfaces is the host's interfaces made by the link of process pid (the
// link names its near device wb<pid in hex>l<n>): links other tests open at
// the same time, in this package or another, are not counted.
func linkIfaces(t *testing.T, pid int) []string {
	t.Helper()
	prefix := fmt.Sprintf("wb%xl", pid)
	var ours []string
	for _, n := range ifaceNames(t) {
		if strings.HasPrefix(n, prefix) {
			ours = append(ours, n)
		}
	}
	return ours
}

// childPIDs is the children of process pid, from /proc.
func childPIDs(pid int) []int {
	var kids []int
	tasks, _ := filepath.Glob(fmt.Sprintf("/proc/%d/task/*/children", pid))
	for _, f := range tasks {
		b, _ := os.ReadFile(f)
		for _, w := range strings.Fields(string(b)) {
			if k, err := strconv.Atoi(w); err == nil {
				kids = append(kids, k)
			}
		}
	}
	return kids
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

// TestLinkInterruptedLeavesNothing: SIGINT sent to `wirebench link` alone
// (a supervisor, `kill -INT`, `timeout -s INT`; not a terminal's Ctrl-C,
// which reaches the command too) ends the command and the link, also when
// wirebench was started with SIGINT ignored (a shell's background job);
// a command that ignores SIGINT is killed by the second one. Before, the
// signals were not passed on, the second one was ignored, and the link
// and the command lived on until the command ended by itself.
func TestLinkInterruptedLeavesNothing(t *testing.T) {
	needRoot(t)
	bin := testkit.Binary(t)
	for _, c := range []struct {
		name, child  string
		signals      int
		unprivileged bool
	}{
		{"once", "", 1, false},
		{"twice, command ignoring SIGINT", "trap '' INT; ", 2, false},
		{"unprivileged once", "", 1, true},
		{"unprivileged twice, command ignoring SIGINT", "trap '' INT; ", 2, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := openTempDir(t, "wirebench-sigint")
			pidFile := filepath.Join(dir, "pid")
			inner := c.child + "echo $$ > " + pidFile + "; sleep 60; echo survived"
			cmd := exec.Command("sh", "-c", `trap '' INT; exec "$0" link rtt=1ms --link-calibrate=false -- sh -c "$1"`, bin, inner)
			if c.unprivileged {
				asNobody(cmd)
			}
			out := startToFile(t, cmd, dir)
			child := waitPID(t, pidFile, out)
			ours := linkIfaces(t, cmd.Process.Pid) // sh exec'd wirebench: the same process
			if len(ours) == 0 && !c.unprivileged {
				t.Fatalf("no interface of the link: %v", ifaceNames(t))
			}
			for i := 0; i < c.signals; i++ {
				time.Sleep(200 * time.Millisecond)
				cmd.Process.Signal(syscall.SIGINT)
			}
			if !waitOrKill(cmd, 30*time.Second) {
				b, _ := os.ReadFile(out.Name())
				t.Fatalf("wirebench link still running 30 s after %d SIGINT:\n%s", c.signals, b)
			}
			if b, _ := os.ReadFile(out.Name()); cmd.ProcessState.ExitCode() == 0 || strings.Contains(string(b), "survived") {
				t.Errorf("exit %d, want the command's interrupted status:\n%s", cmd.ProcessState.ExitCode(), b)
			}
			for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(20 * time.Millisecond) {
				gone := syscall.Kill(child, 0) != nil
				left := false
				for _, n := range ifaceNames(t) {
					left = left || slices.Contains(ours, n)
				}
				if gone && !left {
					break
				}
				if time.Now().After(deadline) {
					t.Fatalf("command alive %v, interfaces %v (the link's: %v)", !gone, ifaceNames(t), ours)
				}
			}
		})
	}
}

// TestLinkDeliversTheCommandsLastPackets: the packets a command sent just
// before it ended (its connections' FINs) still cross the link: the
// server sees the connection close. Before, the link was torn down the
// moment the command ended, the FINs in flight went with it, and the
// server held the connection ESTABLISHED (its idle timeout, or minutes of
// retransmissions to an address gone).
func TestLinkDeliversTheCommandsLastPackets(t *testing.T) {
	needRoot(t)
	bash := testkit.NeedTool(t, "bash", "apt-get install -y bash")
	bin := testkit.Binary(t)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	port := ln.Addr().(*net.TCPAddr).Port
	cmd := exec.Command(bin, "link", "rtt=300ms", "--link-calibrate=false", "--",
		bash, "-c", fmt.Sprintf("exec 3<>/dev/tcp/127.0.0.1/%d; echo hi >&3", port))
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	ln.(*net.TCPListener).SetDeadline(time.Now().Add(10 * time.Second))
	c, err := ln.Accept()
	if err != nil {
		t.Fatalf("the command's connection never reached the server: %v", err)
	}
	defer c.Close()
	c.SetReadDeadline(time.Now().Add(10 * time.Second))
	b, err := io.ReadAll(c)
	if err != nil || string(b) != "hi\n" {
		t.Fatalf("the server read %q, %v: want the command's line, then its FIN", b, err)
	}
}

// openTempDir is a temporary directory anyone may write in (0777, not
// t.TempDir's 0700 under a 0700 parent): the unprivileged cases run the
// link as nobody, who writes its output there. Removed after the test.
func openTempDir(t *testing.T, prefix string) string {
	t.Helper()
	dir, err := os.MkdirTemp("", prefix)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	if err := os.Chmod(dir, 0o777); err != nil {
		t.Fatal(err)
	}
	return dir
}

// waitPID waits up to a minute for the command run through the link to
// write its process ID into pidFile, and returns it.
func waitPID(t *testing.T, pidFile string, out *os.File) int {
	t.Helper()
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			b, _ := os.ReadFile(out.Name())
			t.Fatalf("the command did not start within a minute; wirebench wrote:\n%s", b)
		}
		if b, err := os.ReadFile(pidFile); err == nil && len(b) > 1 {
			return atoi(t, strings.TrimSpace(string(b)))
		}
	}
}

// TestLinkLeavesNoDescendants: what the command started in the background
// (a shell's `&`, a daemon) goes with the link, whether wirebench was
// killed with SIGKILL or the command ended by itself, as root and
// unprivileged. Before, only the command itself got SIGKILL when
// wirebench died: its children lived on, and with them the far side's
// namespace, cut off from any link (and whatever files they held open).
func TestLinkLeavesNoDescendants(t *testing.T) {
	needRoot(t)
	bin := testkit.Binary(t)
	for _, c := range []struct {
		name                 string
		killed, unprivileged bool
	}{
		{"killed", true, false},
		{"ended", false, false},
		{"unprivileged killed", true, true},
		{"unprivileged ended", false, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := openTempDir(t, "wirebench-reap")
			pidFile := filepath.Join(dir, "pid")
			// The background sleep's host PID ($!), written once it runs.
			script := "sleep 300 & echo $! > " + pidFile + ".tmp; mv " + pidFile + ".tmp " + pidFile
			if c.killed {
				script += "; exec sleep 300"
			}
			cmd := exec.Command(bin, "link", "rtt=1ms", "--link-calibrate=false", "--", "sh", "-c", script)
			if c.unprivileged {
				asNobody(cmd)
			}
			out := startToFile(t, cmd, dir)
			bg := waitPID(t, pidFile, out)
			defer syscall.Kill(bg, syscall.SIGKILL)
			if c.killed {
				cmd.Process.Kill()
			}
			if !waitOrKill(cmd, 30*time.Second) {
				t.Fatal("wirebench link did not end within 30 s")
			}
			for deadline := time.Now().Add(10 * time.Second); syscall.Kill(bg, 0) == nil; time.Sleep(20 * time.Millisecond) {
				if b, _ := os.ReadFile(fmt.Sprintf("/proc/%d/stat", bg)); strings.Contains(string(b), ") Z ") {
					break // a zombie: dead, not yet reaped by init
				}
				if time.Now().After(deadline) {
					b, _ := os.ReadFile(out.Name())
					t.Fatalf("the command's background process %d lives on 10 s after wirebench ended:\n%s", bg, b)
				}
			}
		})
	}
}

// startToFile starts cmd, its output to the file "out" in dir (closed at
// the test's end): a file, not a pipe, since a descendant left alive
// would hold up Wait on a pipe.
func startToFile(t *testing.T, cmd *exec.Cmd, dir string) *os.File {
	t.Helper()
	out, err := os.Create(filepath.Join(dir, "out"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { out.Close() })
	cmd.Stdout, cmd.Stderr = out, out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	return out
}

// waitOrKill waits for cmd to end; past d it kills it, reaps it and
// reports false, so a hung command fails its test instead of blocking it.
func waitOrKill(cmd *exec.Cmd, d time.Duration) bool {
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case <-done:
		return true
	case <-time.After(d):
		cmd.Process.Kill()
		<-done
		return false
	}
}

// TestRelayFiguresAsked: the far side asks for the relay's figures with
// its run's time, and gets them back as the process running the relay
// made them for that time; a line that is no request ends the exchange.
func TestRelayFiguresAsked(t *testing.T) {
	t.Parallel()
	far, near := net.Pipe()
	defer far.Close()
	var asked atomic.Bool
	done := make(chan struct{})
	go func() {
		defer close(done)
		serveRelay(near, func(wall time.Duration) *results.LinkRelay {
			return &results.LinkRelay{UpPackets: 7, CPUPerPacket: wall / 1000, Limited: "wall " + wall.String()}
		}, &asked)
		near.Close()
	}()
	r, err := askRelay(far, 3*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if r.UpPackets != 7 || r.CPUPerPacket != 3*time.Millisecond || r.Limited != "wall 3s" || !asked.Load() {
		t.Errorf("got %+v (asked %v); want the figures made for the run's 3 s", r, asked.Load())
	}
	if _, err := io.WriteString(far, "stats\n"); err != nil {
		t.Fatal(err)
	}
	<-done // not a request: serving ends
}
