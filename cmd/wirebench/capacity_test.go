package main

import (
	"net"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/wirebench/wirebench/internal/testkit"
	"github.com/wirebench/wirebench/results"
)

func TestCapacityUsage(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"http://127.0.0.1:1/"}, "--slo is required"},
		{[]string{"--slo", "p99", "http://127.0.0.1:1/"}, "--slo: "},
		{[]string{"--slo", "rps>10", "http://127.0.0.1:1/"}, "the SLO takes latency and errors"},
		{[]string{"--slo", "p99<1s", "--precision", "150%", "http://127.0.0.1:1/"}, "--precision \"150%\""},
		{[]string{"--slo", "p99<1s", "--precision", "x", "http://127.0.0.1:1/"}, "--precision \"x\""},
		{[]string{"--slo", "p99<1s", "--min-rate", "10", "--max-rate", "5", "http://127.0.0.1:1/"}, "min rate 10 above max rate 5"},
		{[]string{"--slo", "p99<1s", "-c", "0", "http://127.0.0.1:1/"}, "-c 0"},
		{[]string{"--slo", "p99<1s"}, "want exactly one URL"},
		{[]string{"--slo", "p99<0ms", "http://127.0.0.1:1/"}, "--slo p99<0ms: no rate can meet it"},
		{[]string{"--slo", "p99>20ms", "http://127.0.0.1:1/"}, "--slo p99>20ms: an SLO bounds latency from above (p99<20ms)"},
		{[]string{"--slo", "p99<1s", "--slo", "errors<200%", "http://127.0.0.1:1/"}, "--slo errors<200%: every rate meets it"},
		{[]string{"--slo", "avg<1ns", "http://127.0.0.1:1/"}, "--slo avg<1ns: no rate can meet it"},
		{[]string{"--slo", "p99<1s", "--server-cpu-quota", "0.5", "http://127.0.0.1:1/"}, "--server-cpu-quota 0.5 needs --server-pid"},
		{[]string{"--slo", "p99<1s", "--server-cpu-quota", "lots", "http://127.0.0.1:1/"}, "--server-cpu-quota: \"lots\": want CPUs"},
	} {
		code, _, errs := runCLI(t, append([]string{"capacity"}, tc.args...)...)
		if strings.Count(strings.TrimSpace(errs), "\n") != 0 {
			t.Errorf("capacity %v: want one line, got %q", tc.args, errs)
		}
		if code != 2 || !strings.Contains(errs, tc.want) {
			t.Errorf("capacity %v: exit %d, stderr %q; want 2 and %q", tc.args, code, errs, tc.want)
		}
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"study", "formats", "--slo", "p99"}, "--slo: "},
		{[]string{"study", "formats", "--slo", "rps>5"}, "the SLO takes latency and errors"},
		{[]string{"study", "formats", "--server-cpu-quota", "-1"}, "--server-cpu-quota: \"-1\": want CPUs"},
	} {
		code, _, errs := runCLI(t, tc.args...)
		if code != 2 || !strings.Contains(errs, tc.want) {
			t.Errorf("capacity %v: exit %d, stderr %q; want 2 and %q", tc.args, code, errs, tc.want)
		}
	}
}

// TestCapacityCLI runs a short search against a fast server whose every
// rate up to --max-rate passes, writes the result and reads it back
// through report and compare.
func TestCapacityCLI(t *testing.T) {
	t.Parallel()
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.Write([]byte("ok")) }))
	defer ts.Close()
	out := filepath.Join(t.TempDir(), "cap.json")
	code, stdout, errs := runCLI(t, "capacity", "--slo", "p99<2s", "--slo", "errors<1%", "--start-rate", "20", "--max-rate", "40",
		"--step-duration", "300ms", "--warmup", "100ms", "--confirm-duration", "300ms", "--out", out, ts.URL)
	if code != 0 {
		t.Fatalf("exit %d\nstdout %s\nstderr %s", code, stdout, errs)
	}
	for _, want := range []string{"capacity: ≥ 40.0/s at p99<2s, errors<1%: every rate up to --max-rate met it", "confirm"} {
		if !strings.Contains(stdout, want) {
			t.Errorf("summary lacks %q:\n%s", want, stdout)
		}
	}
	if strings.Count(errs, "step ") != 2 || strings.Count(errs, "confirm ") != 1 {
		t.Errorf("want two step lines and a confirmation on stderr, got %q", errs)
	}
	c := readCapacity(t, out)
	if c.Limit != results.LimitMaxRate || c.Rate != 40 || len(c.Steps) != 2 || c.Confirm == nil || c.Scenario != "raw" || c.Search.StepDuration != 300*time.Millisecond {
		t.Errorf("result: limit %s rate %v steps %d confirm %v scenario %q", c.Limit, c.Rate, len(c.Steps), c.Confirm != nil, c.Scenario)
	}
	for _, args := range [][]string{{"report", out}, {"report", "--format", "html", out}, {"report", "--format", "csv", out}, {"compare", out, out}} {
		code, stdout, errs := runCLI(t, args...)
		want := map[string]string{"md": "### Capacity search steps", "html": "Latency against offered rate", "csv": "offered_req_per_s", "compare": "change: new vs old 1.00×"}
		key := args[0]
		if key == "report" {
			key = "md"
			if len(args) == 4 {
				key = args[2]
			}
		}
		if code != 0 || !strings.Contains(stdout, want[key]) {
			t.Errorf("wirebench %v: exit %d, want %q in\n%s%s", args, code, want[key], stdout, errs)
		}
	}
	if code, _, errs := runCLI(t, "capacity", "--slo", "p99<2s", "--max-rate", "40", "--out", out, ts.URL); code != 1 || !strings.Contains(errs, "exists") {
		t.Errorf("an existing --out was not refused: exit %d %q", code, errs)
	}
}

// TestCapacityNoRateInTime: a search whose time runs out before any rate
// met the SLO has no answer; it says so and exits 99, never 0 with 0/s.
func TestCapacityNoRateInTime(t *testing.T) {
	t.Parallel()
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		time.Sleep(30 * time.Millisecond)
		w.Write([]byte("ok"))
	}))
	defer ts.Close()
	code, stdout, errs := runCLI(t, "capacity", "--slo", "p99<5ms", "--start-rate", "20", "--max-steps", "1",
		"--step-duration", "200ms", "--warmup", "50ms", ts.URL)
	if code != exitThreshold || strings.Contains(stdout+errs, "0.00/s") ||
		!strings.Contains(stdout, "capacity: none: the search ran out of time before any rate met p99<5ms, errors<1%; the lowest tried, 20.0/s, failed") ||
		!strings.Contains(errs, "wirebench capacity: SLO missed: none: the search ran out of time") {
		t.Errorf("exit %d\nstdout %s\nstderr %s", code, stdout, errs)
	}
}

// TestCapacityNeverAnswered: a target refusing every connection, or
// answering every request 403, ends the search at its first step with
// exit 1 and the cause on the terminal and in --out; never 99 ("SLO
// missed") nor a bare error share.
func TestCapacityNeverAnswered(t *testing.T) {
	t.Parallel()
	forbidden := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(http.StatusForbidden) }))
	t.Cleanup(forbidden.Close)
	for name, tc := range map[string]struct{ url, cause string }{
		"refused":   {"http://" + deadAddr(t) + "/", "connection refused 100%"},
		"forbidden": {forbidden.URL, "status 4xx 100% (403×"},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			out := filepath.Join(t.TempDir(), "cap.json")
			start := time.Now()
			code, stdout, errs := runCLI(t, "capacity", "--slo", "p99<20ms", "--start-rate", "50",
				"--step-duration", "300ms", "--warmup", "100ms", "--out", out, tc.url)
			if code != 1 || !strings.Contains(errs, "wirebench capacity: no request succeeded at any rate tried: "+tc.cause) ||
				!strings.Contains(errs, "failures: "+tc.cause) || !strings.Contains(stdout, "capacity: none: no request succeeded") ||
				strings.Contains(errs, "SLO missed") {
				t.Errorf("exit %d\nstdout %s\nstderr %s", code, stdout, errs)
			}
			if took := time.Since(start); testkit.Timing() && took > 3*time.Second {
				t.Errorf("took %v: the search went on after the first step", took)
			}
			c := readCapacity(t, out)
			if c.Limit != results.LimitFailed || len(c.Steps) != 1 || len(c.Steps[0].Failures) != 1 || c.Steps[0].Failures[0].Count != c.Steps[0].Requests {
				t.Errorf("limit %s, %d steps, failures %+v", c.Limit, len(c.Steps), c.Steps[0].Failures)
			}
		})
	}
}

// deadAddr is a loopback address with nothing listening: connections to
// it are refused.
func deadAddr(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	return addr
}
