package replay

import (
	"context"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/wirebench/wirebench/internal/testkit"
	"github.com/wirebench/wirebench/load"
	"github.com/wirebench/wirebench/load/conn"
	"github.com/wirebench/wirebench/load/replay/reqlog"
)

// nginxLine is what the test reads of nginx's log itself, without our
// access-log reader: the request line, the status and $msec.
var nginxLine = regexp.MustCompile(`"(\S+) (\S+) HTTP/1\.[01]" (\d{3}) .* (\d+\.\d{3}) \d+\.\d{3}$`)

// nginxLog reads an access log of the "timed" format below: "METHOD
// target status" → count, and the arrival times ($msec, ms) in file order.
func nginxLog(t *testing.T, path string) (map[string]int, []int64) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	counts := map[string]int{}
	var at []int64
	for _, l := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		m := nginxLine.FindStringSubmatch(l)
		if m == nil {
			t.Fatalf("%s: a line the test cannot read: %q", path, l)
		}
		counts[m[1]+" "+m[2]+" "+m[3]]++
		ms, _ := strconv.ParseFloat(m[4], 64)
		at = append(at, int64(ms*1000+.5))
	}
	return counts, at
}

// waitLines waits (a guard, not a measurement) until nginx has logged n
// requests: it writes a line after its response has gone out.
func waitLines(t *testing.T, path string, n int) {
	t.Helper()
	for deadline := time.Now().Add(time.Minute); ; {
		b, _ := os.ReadFile(path)
		if got := strings.Count(string(b), "\n"); got >= n || time.Now().After(deadline) {
			if got != n {
				t.Fatalf("%s: %d lines, want %d:\n%s", path, got, n, b)
			}
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// replayTo replays path to url at speed and returns the result.
func replayTo(t *testing.T, path, format, url string, speed float64) int64 {
	t.Helper()
	sc, err := New(Options{File: path, Format: format, Options: conn.Options{URL: url}, Speed: speed})
	if err != nil {
		t.Fatal(err)
	}
	defer sc.Close()
	o := load.Options{Pacer: sc.Pacer()}
	o.Open, o.Concurrency, o.Duration = true, 8, time.Minute
	res, err := load.Run(context.Background(), o, sc)
	if err != nil {
		t.Fatal(err)
	}
	if st := sc.Stats(); res.Failed != 0 || st.Malformed != 0 {
		t.Fatalf("replay of %s: %d of %d failed %v; %d malformed %v", path, res.Failed, res.Requests, res.Failures, st.Malformed, st.Examples)
	}
	return res.Requests
}

// TestReplayAgainstNginx replays to a server nobody here wrote and counts
// what it logged: a request log of ours to nginx, then nginx's own
// access log (combined, with $msec and $request_time) to nginx again.
// Each server's log holds exactly the requests recorded — by method,
// target and status. With WIREBENCH_TIMING=1 the arrival times nginx
// logged the second time follow the first's, at speed 2, within 10 ms.
func TestReplayAgainstNginx(t *testing.T) {
	if testing.Short() {
		t.Skip("runs nginx; skipped with -short")
	}
	var logs []string
	addrs := testkit.StartNginx(t, nil, 2, func(dir string, addrs []string) string {
		var b strings.Builder
		b.WriteString("\tlog_format timed '$remote_addr - $remote_user [$time_local] \"$request\" $status $body_bytes_sent \"$http_referer\" \"$http_user_agent\" $msec $request_time';\n")
		for i, a := range addrs {
			logs = append(logs, filepath.Join(dir, fmt.Sprintf("access-%d.log", i)))
			fmt.Fprintf(&b, "\tserver {\n\t\tlisten %s;\n\t\taccess_log %s timed;\n\t\tlocation /missing/ { return 404; }\n\t\tlocation / { return 200 \"ok\\n\"; }\n\t}\n", a, logs[i])
		}
		return b.String()
	})

	// Ours to nginx: 60 requests over 60 ms, a recorded 404 among them.
	rec := recording(t)
	want := map[string]int{}
	r, err := os.Open(rec)
	if err != nil {
		t.Fatal(err)
	}
	rd := reqlog.NewReader(r)
	for q, err := rd.Next(); err == nil; q, err = rd.Next() {
		want[q.Method+" "+q.Target+" "+strconv.Itoa(q.Status)]++
	}
	r.Close()
	if len(want) < 4 {
		t.Fatalf("the recording has %d kinds of request", len(want))
	}
	if n := replayTo(t, rec, FormatReqlog, "http://"+addrs[0], 1); n != 60 {
		t.Fatalf("sent %d, want 60", n)
	}
	waitLines(t, logs[0], 60)
	got, first := nginxLog(t, logs[0])
	// nginx answers 200 where the recording had 201: compare without it.
	norm := func(m map[string]int) map[string]int {
		out := map[string]int{}
		for k, v := range m {
			out[strings.Replace(k, " 201", " 200", 1)] += v
		}
		return out
	}
	if !maps.Equal(norm(want), got) {
		t.Fatalf("nginx logged %v\nrecorded %v", got, norm(want))
	}

	// nginx's log to nginx, twice as fast.
	if n := replayTo(t, logs[0], FormatCombined, "http://"+addrs[1], 2); n != 60 {
		t.Fatalf("replaying nginx's log sent %d, want 60", n)
	}
	waitLines(t, logs[1], 60)
	again, second := nginxLog(t, logs[1])
	if !maps.Equal(got, again) {
		t.Fatalf("replaying nginx's own log: logged %v, want %v", again, got)
	}

	testkit.NeedTiming(t)
	slices.Sort(first)
	slices.Sort(second)
	for i := range first {
		want, got := (first[i]-first[0])/2, second[i]-second[0]
		if d := got - want; d > 10 || d < -10 {
			t.Errorf("request %d arrived at +%d ms, want +%d ms (±10)", i, got, want)
		}
	}
}
