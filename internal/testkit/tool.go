package testkit

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// InCI reports whether the tests run in CI: env CI=true, as .ci/run sets
// it (and GitHub Actions, GitLab and most others). Nothing else counts.
func InCI() bool { return os.Getenv("CI") == "true" }

// NeedTool returns the path of a peer tool: on PATH, or in GOPATH/bin
// (where `go install` puts it). When it is missing, the test fails in CI
// (.ci/run installs every tool) and is skipped elsewhere with the install
// command, e.g. "apt-get install -y nginx".
func NeedTool(t testing.TB, name, installHint string) string {
	t.Helper()
	if p, err := exec.LookPath(name); err == nil {
		return p
	}
	for _, dir := range goBinDirs() {
		p := filepath.Join(dir, name)
		if st, err := os.Stat(p); err == nil && !st.IsDir() && st.Mode()&0o111 != 0 {
			return p
		}
	}
	if InCI() {
		t.Fatalf("%s is not installed, and in CI (CI=true) every peer tool must be: .ci/run installs it with: %s", name, installHint)
	}
	t.Skipf("%s is not installed; install it with: %s (under CI=true this test fails instead)", name, installHint)
	return ""
}

// goBinDirs are where `go install` puts tools: GOBIN, else GOPATH/bin,
// else ~/go/bin.
func goBinDirs() []string {
	if d := os.Getenv("GOBIN"); d != "" {
		return []string{d}
	}
	var dirs []string
	for _, p := range filepath.SplitList(os.Getenv("GOPATH")) {
		dirs = append(dirs, filepath.Join(p, "bin"))
	}
	if home, err := os.UserHomeDir(); err == nil {
		dirs = append(dirs, filepath.Join(home, "go", "bin"))
	}
	return dirs
}

// Timing reports whether timing assertions run: env WIREBENCH_TIMING=1.
// Percentiles and durations measured from the wall clock flake on a busy
// machine; CI checks them in a quiet step of their own (-p 1, after the
// main suite). Exact counts are asserted always, whatever this says.
func Timing() bool { return os.Getenv("WIREBENCH_TIMING") == "1" }

// NeedTiming skips the rest of a test (or subtest) unless Timing().
func NeedTiming(t testing.TB) {
	t.Helper()
	if !Timing() {
		t.Skipf("%s", "a wall-clock timing assertion: runs with WIREBENCH_TIMING=1 (CI's quiet step; see docs/testing.md)")
	}
}

// Peers reports whether the slow peer, browser and end-to-end tests run:
// env WIREBENCH_PEERS=1.
func Peers() bool { return os.Getenv("WIREBENCH_PEERS") == "1" }

// NeedPeers skips a slow peer, browser or end-to-end test unless
// WIREBENCH_PEERS=1 (CI's peer step). Such a test still needs its tools:
// call NeedTool after this.
func NeedPeers(t testing.TB) {
	t.Helper()
	if !Peers() {
		t.Skipf("%s", "a slow peer/browser/end-to-end test: runs with WIREBENCH_PEERS=1 (CI's peer step; see docs/testing.md)")
	}
}
