package measure

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/wirebench/wirebench/internal/testkit"
)

// TestEnvironmentReadsTheMachine compares what Environment records with
// the sources it claims to read, asked independently.
func TestEnvironmentReadsTheMachine(t *testing.T) {
	e := Environment(t.Context())
	var model string
	if b, err := os.ReadFile("/proc/cpuinfo"); err == nil {
		for line := range strings.SplitSeq(string(b), "\n") {
			if k, v, ok := strings.Cut(line, ":"); ok && strings.TrimSpace(k) == "model name" {
				model = strings.TrimSpace(v)
				break
			}
		}
	}
	if e.CPUModel != model {
		t.Errorf("CPUModel = %q, /proc/cpuinfo says %q", e.CPUModel, model)
	}
	if host, _ := os.Hostname(); e.Hostname != host || !strings.HasPrefix(e.Kernel, "Linux ") {
		t.Errorf("hostname %q kernel %q", e.Hostname, e.Kernel)
	}
}

// TestGitCommit: the commit and the dirty flag are git's own answer for
// the working directory (a test binary carries no VCS stamp), here a fresh
// repository made for the test, clean and then with a tracked file changed.
func TestGitCommit(t *testing.T) {
	testkit.NeedTool(t, "git", "apt-get install -y git")
	dir := t.TempDir()
	git := func(args ...string) string {
		t.Helper()
		cmd := exec.Command("git", args...)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@t", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@t")
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
		return string(bytes.TrimSpace(out))
	}
	git("init", "-q")
	if err := os.WriteFile(filepath.Join(dir, "f"), []byte("1"), 0o644); err != nil {
		t.Fatal(err)
	}
	git("add", "f")
	t.Chdir(dir)
	// Before the first commit there is none (a file added is no commit).
	if c, d := gitCommit(t.Context()); c != "" || d {
		t.Errorf("before the first commit: %q %v", c, d)
	}
	git("commit", "-q", "-m", "one")
	head := git("rev-parse", "HEAD")
	if commit, dirty := gitCommit(t.Context()); commit != head || dirty {
		t.Errorf("clean: %q %v, want %q false", commit, dirty, head)
	}
	// An untracked file does not make the tree dirty; a changed one does.
	if err := os.WriteFile(filepath.Join(dir, "new"), []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, dirty := gitCommit(t.Context()); dirty {
		t.Error("an untracked file made the tree dirty")
	}
	if err := os.WriteFile(filepath.Join(dir, "f"), []byte("2"), 0o644); err != nil {
		t.Fatal(err)
	}
	if commit, dirty := gitCommit(t.Context()); commit != head || !dirty {
		t.Errorf("changed: %q %v, want %q true", commit, dirty, head)
	}
	// The probe has 2 s: a context already over leaves the commit empty.
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	if c, d := gitCommit(ctx); c != "" || d {
		t.Errorf("with a cancelled context: %q %v", c, d)
	}
	// Outside a repository there is no commit.
	t.Chdir(t.TempDir())
	if c, d := gitCommit(t.Context()); c != "" || d {
		t.Errorf("outside a repository: %q %v", c, d)
	}
}

// TestProcParsing pins /proc's formats with literal values: ticks of
// 10 ms, kB of 1024 bytes, fields counted after the last ')'.
func TestProcParsing(t *testing.T) {
	const fields13 = " S 1 2 3 4 5 6 7 8 9 10 12 34" // state, 10 more, utime, stime
	for _, tc := range []struct {
		name, in  string
		user, sys time.Duration
		ok        bool
	}{
		{"exactly 13 fields after comm", "9 (x)" + fields13, 120 * time.Millisecond, 340 * time.Millisecond, true},
		{"12 fields after comm", "9 (x) S 1 2 3 4 5 6 7 8 9 10 12", 0, 0, false},
		{"comm starts the line", ")" + fields13, 120 * time.Millisecond, 340 * time.Millisecond, true},
		{"bad utime", "9 (x) S 1 2 3 4 5 6 7 8 9 10 x 34", 0, 0, false},
		{"bad stime", "9 (x) S 1 2 3 4 5 6 7 8 9 10 12 -", 0, 0, false},
	} {
		u, s, err := parseStat([]byte(tc.in))
		if (err == nil) != tc.ok || u != tc.user || s != tc.sys {
			t.Errorf("%s: parseStat = %v, %v, %v", tc.name, u, s, err)
		}
	}
	rss, peak := parseStatus([]byte("Name:\tx\nVmHWM:\t    2048 kB\nVmRSS:\t 1000 kB\nThreads:\t3\n"))
	if rss != 1024000 || peak != 2097152 {
		t.Errorf("parseStatus = %d, %d; want 1024000, 2097152", rss, peak)
	}
	if rss, peak := parseStatus([]byte("Name:\tkthread\nVmRSS:\n")); rss != 0 || peak != 0 {
		t.Errorf("no values: %d %d", rss, peak)
	}
	if got := (ProcSample{User: 3 * time.Second, System: 250 * time.Millisecond}).CPU(); got != 3250*time.Millisecond {
		t.Errorf("CPU() = %v", got)
	}
}

// TestSelfCPUCountsWork spins until getrusage charges 100 ms of user time
// (the wall time it takes depends on the machine's load; 5 s, a 2% share
// of a CPU, is a cap, not an expectation) and checks that /proc's 10 ms ticks agree within
// two ticks plus the other threads' noise.
func TestSelfCPUCountsWork(t *testing.T) {
	p0, err := SampleSelf()
	if err != nil {
		t.Fatal(err)
	}
	u0, s0 := SelfCPU()
	start := time.Now()
	u1, s1 := u0, s0
	for u1-u0 < 100*time.Millisecond {
		if time.Since(start) > time.Minute { // a guard: 100 ms of CPU, however busy the box
			t.Fatalf("user time %v → %v after a minute of spinning", u0, u1)
		}
		for range 100000 {
		}
		u1, s1 = SelfCPU()
	}
	p1, err := SampleSelf()
	if err != nil {
		t.Fatal(err)
	}
	if s1 < s0 {
		t.Errorf("system time went back: %v → %v", s0, s1)
	}
	rusage, proc := u1-u0, p1.User-p0.User
	if proc < rusage-30*time.Millisecond || proc > rusage+100*time.Millisecond {
		t.Errorf("getrusage counted %v of user time, /proc %v", rusage, proc)
	}
}

// TestHistogramMean: the mean of recorded values, in microseconds.
func TestHistogramMean(t *testing.T) {
	h := NewHistogram()
	for _, d := range []time.Duration{10, 20, 60} {
		h.Record(d * time.Microsecond)
	}
	if h.Mean() != 30*time.Microsecond {
		t.Errorf("Mean = %v, want 30µs", h.Mean())
	}
}
