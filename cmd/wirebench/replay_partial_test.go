package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// writeLines writes a wirebench request log of the given request lines.
func writeLines(t *testing.T, lines ...string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "rec.log")
	if err := os.WriteFile(path, []byte(`{"wirebench":"requests/v1"}`+"\n"+strings.Join(lines, "\n")+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

func reqLine(at int64, target string) string {
	return fmt.Sprintf(`{"t":%d,"m":"GET","u":%q,"s":200}`, at, target)
}

// TestReplayStrayTimestamp: one request 169 h before the other 20 sent
// only that one, exit 0. The pause is cut to --max-gap, counted and
// said; with no bound (--max-gap 0) the run that cannot reach the rest
// exits non-zero, unless --allow-partial.
func TestReplayStrayTimestamp(t *testing.T) {
	url, _ := serveInProcess(t, "--seed-users", "3")
	const t0 = int64(1.7e18)
	lines := []string{reqLine(t0, "/users/1")}
	for i := range 20 {
		lines = append(lines, reqLine(t0+int64(169*time.Hour)+int64(i)*int64(time.Millisecond), "/users/2"))
	}
	rec := writeLines(t, lines...)
	out := filepath.Join(t.TempDir(), "r.json")
	code, stdout, errs := runCLI(t, "replay", "-q", rec, "--target", url, "--max-gap", "20ms", "--out", out)
	if code != 0 || !strings.Contains(stdout, "gaps cut      1 pauses longer than --max-gap (the longest 169h0m0s)") ||
		!strings.Contains(stdout, "sent          21 of the recording's 21 requests (100.0%)") {
		t.Fatalf("exit %d\n%s\n%s", code, stdout, errs)
	}
	if res := readLoad(t, out); res.Requests != 21 || !strings.Contains(strings.Join(res.Warnings, "\n"), "1 pauses longer than 20ms") {
		t.Fatalf("%d requests, warnings %q", res.Requests, res.Warnings)
	}
	code, stdout, errs = runCLI(t, "replay", "-q", rec, "--target", url, "--max-gap", "0")
	if code != 1 || !strings.Contains(errs, "replay: partial") {
		t.Fatalf("no bound: exit %d\n%s\n%s", code, stdout, errs)
	}
	if code, stdout, errs = runCLI(t, "replay", "-q", rec, "--target", url, "--max-gap", "0", "--allow-partial"); code != 0 {
		t.Fatalf("--allow-partial: exit %d\n%s\n%s", code, stdout, errs)
	}
}

// TestReplayPartialExitsNonZero: a recording one line of which in ten
// does not parse, and a run -d cuts short, send less than 99% of it:
// exit 1 naming what was left out, unless --allow-partial.
func TestReplayPartialExitsNonZero(t *testing.T) {
	url, _ := serveInProcess(t, "--seed-users", "3")
	const t0 = int64(1.7e18)
	skipped := withSkippedLines(t, t0)
	var lines []string
	for i := range 40 {
		lines = append(lines, reqLine(t0+int64(i)*int64(50*time.Millisecond), "/users/1"))
	}
	long := writeLines(t, lines...)
	for _, c := range []struct {
		name string
		args []string
		want string
	}{
		{"skipped", []string{skipped}, "sent 20 of the recording's 22 requests (90.9%, below 99%: 2 lines or entries skipped, 0 not reached)"},
		{"cut", []string{long, "-d", "300ms"}, "replay: partial"},
	} {
		t.Run(c.name, func(t *testing.T) {
			args := append([]string{"replay", "-q", "--target", url}, c.args...)
			code, stdout, errs := runCLI(t, args...)
			if code != 1 || !strings.Contains(errs, c.want) || !strings.Contains(stdout, "sent  ") {
				t.Fatalf("exit %d, want 1 and %q\n%s\n%s", code, c.want, stdout, errs)
			}
			if code, stdout, errs := runCLI(t, append(args, "--allow-partial")...); code != 0 {
				t.Fatalf("--allow-partial: exit %d\n%s\n%s", code, stdout, errs)
			}
		})
	}
}

// TestReplaySearchRefusesPartialOrRatelessRecording: replay --slo and
// capacity --replay searched over what a recording held after its
// skipped lines without a word (47 of 50 requests, exit 0), and over a
// recording of one request at an invented rate (1,000/s). The first
// exits 1 naming what was skipped, unless --allow-partial; the second is
// refused: it has no rate of its own to scale.
func TestReplaySearchRefusesPartialOrRatelessRecording(t *testing.T) {
	url, _ := serveInProcess(t, "--seed-users", "3")
	const t0 = int64(1.7e18)
	skipped := withSkippedLines(t, t0)
	one := writeLines(t, reqLine(t0, "/users/1"))
	same := writeLines(t, reqLine(t0, "/users/1"), reqLine(t0, "/users/2"))
	for _, c := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"replay", skipped, "--target", url, "--slo", "p99<1s", "--max-time", "2s"}, 1, "replay: partial: the recording's 22 lines or entries hold 20 requests (90.9%, below 99%: 2 skipped); --allow-partial accepts it"},
		{[]string{"capacity", "--replay", skipped, "--slo", "p99<1s", "--max-time", "2s", url}, 1, "2 skipped); --allow-partial accepts it"},
		{[]string{"replay", one, "--target", url, "--slo", "p99<1s", "--max-time", "2s"}, 2, "its 1 requests share one time: it has no rate of its own"},
		{[]string{"capacity", "--replay", same, "--slo", "p99<1s", "--max-time", "2s", url}, 2, "its 2 requests share one time: it has no rate of its own"},
	} {
		code, stdout, errs := runCLI(t, c.args...)
		if code != c.code || !strings.Contains(errs, c.want) {
			t.Errorf("%q: exit %d, want %d and %q\n%s\n%s", c.args, code, c.code, c.want, stdout, errs)
		}
	}
}

// withSkippedLines writes a recording of 20 requests 1 ms apart from t0
// with two lines that do not parse among them (22 lines).
func withSkippedLines(t *testing.T, t0 int64) string {
	var lines []string
	for i := range 20 {
		lines = append(lines, reqLine(t0+int64(i)*int64(time.Millisecond), "/users/1"))
		if i%10 == 0 {
			lines = append(lines, `{"t":1,"m":"G T","u":"/x"}`)
		}
	}
	return writeLines(t, lines...)
}
