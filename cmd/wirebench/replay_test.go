package main

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"math"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/wirebench/wirebench/internal/testkit"
	"github.com/wirebench/wirebench/load/replay/reqlog"
	"github.com/wirebench/wirebench/results"
)

// serveInProcess runs `wirebench serve args…` in this process on a free port
// and returns its REST URL; stop ends it and returns its exit code.
func serveInProcess(t *testing.T, args ...string) (url string, stop func() int) {
	t.Helper()
	faces, stop := serveFaces(t, args...)
	return "http://" + faces["http"], stop
}

// serveFaces is serveInProcess returning every address of the listening
// line by face: http, grpc, https, h3.
func serveFaces(t *testing.T, args ...string) (faces map[string]string, stop func() int) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	pr, pw := io.Pipe()
	done := make(chan int, 1)
	errb := &testkit.SyncBuffer{}
	go func() {
		done <- run(ctx, &cliEnv{stdin: strings.NewReader(""), stdout: pw, stderr: errb},
			append([]string{"serve", "--http", "127.0.0.1:0", "--no-grpc"}, args...))
		pw.Close()
	}()
	line, err := bufio.NewReader(pr).ReadString('\n')
	if err != nil {
		cancel()
		t.Fatalf("serve %v: no listening line (exit %d): %s", args, <-done, errb.String())
	}
	go io.Copy(io.Discard, pr)
	faces = map[string]string{}
	for _, m := range regexp.MustCompile(`(\w+)=(\S+)`).FindAllStringSubmatch(line, -1) {
		faces[m[1]] = m[2]
	}
	if faces["http"] == "" {
		cancel()
		t.Fatalf("listening line %q", line)
	}
	stopped := false
	code := 0
	stop = func() int {
		if !stopped {
			stopped = true
			cancel()
			select {
			case code = <-done:
			case <-time.After(time.Minute):
				t.Fatal("serve did not stop within a minute")
			}
		}
		return code
	}
	t.Cleanup(func() { stop() })
	return faces, stop
}

// readReqlog reads a request log whole (small logs only).
func readReqlog(t *testing.T, path string) []reqlog.Request {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	out, err := reqlog.ReadAll(f)
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return out
}

// TestServeRecord: serve --record logs each REST request as it arrives
// (method, target, headers, body, status), flushed when serve stops.
func TestServeRecord(t *testing.T) {
	path := filepath.Join(t.TempDir(), "served.log")
	url, stop := serveInProcess(t, "--record", path, "--seed-users", "3")
	for _, c := range []struct{ method, target, body string }{
		{"GET", "/users", ""},
		{"POST", "/users", `{"name":"Ada","email":"ada@example.com"}`},
		{"GET", "/users/1?x=y", ""},
		{"GET", "/users/999999", ""},
	} {
		req, _ := http.NewRequest(c.method, url+c.target, strings.NewReader(c.body))
		if c.body != "" {
			req.Header.Set("Content-Type", "application/json")
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
	}
	if code := stop(); code != 0 {
		t.Fatalf("serve exited %d", code)
	}
	log := readReqlog(t, path)
	var got []string
	for _, q := range log {
		got = append(got, q.Method+" "+q.Target+" "+http.StatusText(q.Status))
	}
	want := []string{"GET /users OK", "POST /users Created", "GET /users/1?x=y OK", "GET /users/999999 Not Found"}
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Fatalf("recorded %q, want %q", got, want)
	}
	if string(log[1].Body) != `{"name":"Ada","email":"ada@example.com"}` || log[0].At == 0 || log[3].At < log[0].At {
		t.Fatalf("body %q, times %d…%d", log[1].Body, log[0].At, log[3].At)
	}
	hasCT := false
	for _, h := range log[1].Header {
		hasCT = hasCT || h[0] == "Content-Type" && h[1] == "application/json"
	}
	if !hasCT {
		t.Fatalf("headers of the POST: %v", log[1].Header)
	}
}

// TestServeRecordNeedsNetHTTP: fasthttp cannot record; serve says so
// and leaves no half-made state behind.
func TestServeRecordNeedsNetHTTP(t *testing.T) {
	var out, errb strings.Builder
	path := filepath.Join(t.TempDir(), "x.log")
	code := run(context.Background(), &cliEnv{stdin: strings.NewReader(""), stdout: &out, stderr: &errb},
		[]string{"serve", "--http", "127.0.0.1:0", "--no-grpc", "--engine", "fasthttp", "--record", path})
	if code != 1 || !strings.Contains(errb.String(), "recording requests needs the nethttp engine") {
		t.Fatalf("exit %d, stderr %q", code, errb.String())
	}
}

// TestRecordThenReplay is what a user does: record traffic with serve
// --record, replay it to another server with wirebench replay --out, and
// render the result. The second server records too: it received as
// many requests, of each endpoint, as the first; the result has them
// per endpoint, and report shows the endpoints.
func TestRecordThenReplay(t *testing.T) {
	dir := t.TempDir()
	first, second := filepath.Join(dir, "first.log"), filepath.Join(dir, "second.log")
	urlA, stopA := serveInProcess(t, "--record", first, "--seed-users", "20")
	for _, args := range [][]string{
		{"load", "-q", "-n", "30", "-c", "2", urlA + "/users/7"},
		{"load", "-q", "-n", "12", "-c", "2", urlA + "/users/12?fields=all"},
		{"load", "-q", "-n", "10", "-c", "1", "-m", "POST", "-H", "Content-Type: application/json",
			"-b", `{"first_message":"a","second_message":"b"}`, urlA + "/echo"},
		{"load", "-q", "-n", "5", "-c", "1", "--expect-status", "404", urlA + "/users/99999"},
	} {
		if code, _, errs := runCLI(t, args...); code != 0 {
			t.Fatalf("%v: exit %d: %s", args, code, errs)
		}
	}
	if code := stopA(); code != 0 {
		t.Fatalf("serve A exited %d", code)
	}
	urlB, stopB := serveInProcess(t, "--record", second, "--seed-users", "20")
	out := filepath.Join(dir, "replay.json")
	code, stdout, errs := runCLI(t, "replay", first, "--target", urlB, "--speed", "4", "--out", out)
	if code != 0 {
		t.Fatalf("replay: exit %d\n%s\n%s", code, stdout, errs)
	}
	if code := stopB(); code != 0 {
		t.Fatalf("serve B exited %d", code)
	}
	count := func(log []reqlog.Request) map[string]int {
		m := map[string]int{}
		for _, q := range log {
			m[q.Method+" "+q.Target+" "+http.StatusText(q.Status)]++
		}
		return m
	}
	a, b := count(readReqlog(t, first)), count(readReqlog(t, second))
	if len(a) != 4 || fmt.Sprint(a) != fmt.Sprint(b) {
		t.Fatalf("recorded %v, the replay's server received %v", a, b)
	}
	res := readLoad(t, out)
	if res.Requests != 57 || res.Failed != 0 || res.Scenario != "replay" {
		t.Fatalf("result: %s, %d requests, %d failed %v", res.Scenario, res.Requests, res.Failed, res.Failures)
	}
	ops := map[string]int64{}
	for _, op := range res.Ops {
		ops[op.Name] = op.Requests
	}
	want := map[string]int64{"GET /users/{id}": 47, "POST /echo": 10}
	if fmt.Sprint(ops) != fmt.Sprint(want) {
		t.Fatalf("per endpoint %v, want %v", ops, want)
	}
	if res.Options.Duration != 0 || res.Lag == nil || res.Lag.Count() != 57 {
		t.Fatalf("duration %v (want 0: the recording bounded it), lag %v", res.Options.Duration, res.Lag)
	}
	if !strings.Contains(stdout, "timing error") || !strings.Contains(stdout, "57 requests scheduled") {
		t.Fatalf("summary lacks the replay's lines:\n%s", stdout)
	}
	code, md, errs := runCLI(t, "report", out)
	if code != 0 || !strings.Contains(md, "GET /users/{id}") || !strings.Contains(md, "recorded schedule") {
		t.Fatalf("report: exit %d %s\n%s", code, errs, md)
	}
}

// TestReplayUsage: each misuse is one line saying what to do, exit 2.
func TestReplayUsage(t *testing.T) {
	t.Parallel()
	log := filepath.Join(t.TempDir(), "r.log")
	if err := os.WriteFile(log, []byte("{\"wirebench\":\"requests/v1\"}\n{\"t\":1,\"m\":\"GET\",\"u\":\"/\"}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"replay", log}, "--target URL is required"},
		{[]string{"replay", "--target", "http://127.0.0.1:1"}, "want exactly one recording FILE, got 0"},
		{[]string{"replay", log, log, "--target", "http://127.0.0.1:1"}, "got 2"},
		{[]string{"replay", log, "--target", "http://127.0.0.1:1", "--loop"}, "--loop repeats until -d"},
		{[]string{"replay", log, "--target", "http://127.0.0.1:1", "--format", "pcap"}, `unknown format "pcap"`},
		{[]string{"replay", filepath.Join(t.TempDir(), "none.har"), "--target", "http://127.0.0.1:1"}, "no such file"},
		{[]string{"replay", log, "--target", "ftp://127.0.0.1:1"}, "want http:// or https://"},
		{[]string{"replay", log, "--target", "https://127.0.0.1:1", "--transport", "h2c"}, "use --transport h2"},
		{[]string{"replay", log, "--target", "http://127.0.0.1:1", "--transport", "h2"}, "use an https:// target"},
		{[]string{"replay", log, "--target", "http://127.0.0.1:1", "--transport", "h3"}, "HTTP/3 over QUIC, always encrypted"},
		{[]string{"replay", log, "--target", "https://127.0.0.1:1", "--transport", "spdy"}, `transport "spdy"`},
		{[]string{"replay", log, "--target", "https://127.0.0.1:1", "--cacert", log}, "no PEM certificate"},
		{[]string{"load", "--replay", log, "--cert", log, "--key", log, "https://127.0.0.1:1"}, "--cert and --key"},
		{[]string{"replay", log, "--target", "http://127.0.0.1:1", "--fields", "ts"}, `--fields: field map "ts"`},
		{[]string{"replay", log, "--target", "http://127.0.0.1:1", "--speed", "0"}, "--speed 0: want > 0"},
		{[]string{"load", "--replay", log, "--replay-fields", "ts", "http://127.0.0.1:1"}, `--replay-fields: field map "ts"`},
		{[]string{"load", "--replay", log, "--replay-format", "pcap", "http://127.0.0.1:1"}, `--replay: unknown format "pcap"`},
		{[]string{"load", "--speed", "2", "http://127.0.0.1:1"}, "--speed applies to --replay"},
		{[]string{"load", "--replay", log, "-r", "100", "http://127.0.0.1:1"}, "the recording is the schedule"},
	} {
		code, _, errs := runCLI(t, c.args...)
		if code != 2 || !strings.Contains(errs, c.want) || strings.Count(errs, "\n") != 1 || strings.Contains(errs, "wirebench replay: --replay") {
			t.Errorf("%v: exit %d, stderr %q; want 2 and %q", c.args[1:], code, errs, c.want)
		}
	}
}

// TestReplaySpeedSearch: --slo searches the speed with capacity's
// search; a server far faster than the recording fits every speed up to
// --max-speed, said in speed, and --out is a capacity result whose
// config has the recording's rate and the answer in speed.
func TestReplaySpeedSearch(t *testing.T) {
	dir := t.TempDir()
	rec := filepath.Join(dir, "rec.log")
	f, err := os.Create(rec)
	if err != nil {
		t.Fatal(err)
	}
	w := reqlog.NewWriter(f, reqlog.Options{})
	for i := range 30 { // 30 requests 2 ms apart: a 60 ms pass, 500/s
		w.Write(&reqlog.Request{At: 1.7e18 + int64(i)*int64(2*time.Millisecond), Method: "GET", Target: fmt.Sprintf("/users/%d", 1+i%3), Status: 200})
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	f.Close()
	url, _ := serveInProcess(t, "--seed-users", "3")
	out := filepath.Join(dir, "cap.json")
	code, stdout, errs := runCLI(t, "replay", rec, "--target", url, "--slo", "p99<5s", "--max-speed", "2",
		"--step-duration", "600ms", "--warmup", "10ms", "--no-confirm", "-q", "--out", out)
	// How far the search gets depends on the machine (a step the client
	// could not keep up with is not the server's); the rest does not.
	if code != 0 || !strings.Contains(stdout, "its own rate (500/s at speed 1)") {
		t.Fatalf("exit %d\n%s\n%s", code, stdout, errs)
	}
	fc, err := os.Open(out)
	if err != nil {
		t.Fatal(err)
	}
	defer fc.Close()
	res, err := results.ReadCapacity(fc)
	if err != nil {
		t.Fatal(err)
	}
	speed := res.Config.Speed
	// The first step is speed 1, 10 passes of 60 ms, the window 1 ms
	// (half a gap) short.
	if res.Scenario != "replay" || len(res.Steps) == 0 || res.Steps[0].Offered != 500 || res.Steps[0].Load.Options.Duration != 599*time.Millisecond || speed == nil {
		t.Fatalf("result: %s, %d steps, speed %v", res.Scenario, len(res.Steps), speed)
	}
	if testkit.Timing() && (res.Limit != results.LimitMaxRate || len(res.Steps) != 2 || speed.Answer != 2.0 ||
		!strings.Contains(stdout, "the recording fits ≥ 2× its own rate (500/s at speed 1)")) {
		t.Fatalf("result: limit %s, %d steps, speed %v\n%s", res.Limit, len(res.Steps), speed, stdout)
	}
	// Whole passes: 10 at speed 1 (60 ms each), 20 at speed 2 (30 ms).
	// A worker that reaches an arrival after the window drops it (the
	// engine's rule): a busy machine may lose some; a quiet one
	// (WIREBENCH_TIMING=1) none.
	// A busy machine can send the search between them (707/s, 841/s…):
	// such a step's window holds at most its rate × window requests,
	// rounded up to a whole pass.
	for _, st := range res.Steps {
		want, exact := map[float64]int64{500: 300, 1000: 600}[st.Offered]
		most := int64(math.Ceil(st.Offered*st.Load.Options.Duration.Seconds())) + 1
		if n := st.Load.Requests; n > most || exact && n > want || testkit.Timing() && exact && (n != want || st.Sent != 1) {
			t.Errorf("step at %g/s: %d requests, sent %.3f, interrupted %d, window %v of %v, failures %v, warnings %v", st.Offered, st.Load.Requests, st.Sent, st.Load.Interrupted, st.Load.Window, st.Load.Options.Duration, st.Load.Failures, st.Load.Warnings)
		}
	}
	// The same search as wirebench capacity --replay, rates in req/s.
	code, stdout, errs = runCLI(t, "capacity", "--slo", "p99<5s", "--replay", rec, "--max-rate", "1000",
		"--step-duration", "600ms", "--warmup", "10ms", "--no-confirm", "-q", url)
	if code != 0 || !strings.Contains(stdout, "its own rate (500/s at speed 1)") ||
		testkit.Timing() && !strings.Contains(stdout, "the recording fits ≥ 2× its own rate (500/s at speed 1)") {
		t.Fatalf("capacity --replay: exit %d\n%s\n%s", code, stdout, errs)
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--slo", "p99<1s", "--speed", "2"}, "drop --speed"},
		{[]string{"--slo", "p99<1s", "--record", "x.log"}, "drop --record"},
		{[]string{"--min-speed", "2"}, "--min-speed applies to the speed search (--slo)"},
		{[]string{"--slo", "p99<1s", "--min-speed", "0"}, "want 0 < min ≤ max"},
		{[]string{"--slo", "rps>5"}, "the rate is what the search finds"},
	} {
		code, _, errs := runCLI(t, append([]string{"replay", rec, "--target", url}, c.args...)...)
		if code != 2 || !strings.Contains(errs, c.want) {
			t.Errorf("%v: exit %d, stderr %q; want 2 and %q", c.args, code, errs, c.want)
		}
	}
}

// TestRecordFullDisk: a --record log that cannot be written does not
// fail the run's requests, and the summary says the log was lost.
func TestRecordFullDisk(t *testing.T) {
	if _, err := os.Stat("/dev/full"); err != nil {
		t.Skip("no /dev/full here")
	}
	url, _ := serveInProcess(t, "--seed-users", "3")
	code, stdout, errs := runCLI(t, "load", "-q", "-n", "5", "-c", "1", "--record", "/dev/full", "--force", url+"/users/1")
	if code != 0 || !strings.Contains(stdout, "no space left on device") || !strings.Contains(stdout, "requests      5") {
		t.Fatalf("exit %d\n%s\n%s", code, stdout, errs)
	}
}
