package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/wirebench/wirebench/internal/testkit"
)

// TestStudyRevWorktreesGoOnTwoSignals: a `study run` with rev cells gets
// two SIGTERMs at once, as `timeout` sends them. Whichever way it ends
// (its own exit 143, or the second signal's default action), no temporary
// worktree is left registered in the user's repository or on disk. Before,
// the second signal killed it with both worktrees still listed.
const secondSignalAfter = 20 * time.Millisecond // 5 and 20 ms fail without the guard; 60 ms is past the window

func TestStudyRevWorktreesGoOnTwoSignals(t *testing.T) {
	testkit.NeedTool(t, "git", "apt-get install -y git")
	bin := testkit.Binary(t)
	repo := t.TempDir()
	gitIn := func(args ...string) string {
		t.Helper()
		cmd := exec.Command("git", append([]string{"-C", repo}, args...)...)
		cmd.Env = append(os.Environ(), "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@t", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@t")
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
		return string(out)
	}
	gitIn("init", "-q", "-b", "main")
	gitIn("commit", "-q", "--allow-empty", "-m", "a")
	gitIn("tag", "a")
	gitIn("commit", "-q", "--allow-empty", "-m", "b")
	file := filepath.Join(repo, "revs.yaml")
	// Two revs, each served by our own binary; 20 trials of 300 ms each,
	// so the signals land long before the end.
	yaml := fmt.Sprintf(`name: revs
trials: 20
warmup: 0s
duration: 300ms
server:
  command: [%q, "serve", "--http", "127.0.0.1:{port}", "--no-grpc"]
  ready: "http://127.0.0.1:{port}/users/1"
load: {url: "http://127.0.0.1:{port}/users/1", concurrency: 1}
cells:
  - name: base
    rev: a
  - name: change
    rev: main
`, bin)
	if err := os.WriteFile(file, []byte(yaml), 0o644); err != nil {
		t.Fatal(err)
	}
	tmp := t.TempDir()
	cmd := exec.Command("sh", "-c", `exec "$0" study run "$1" --no-pin --out "$2" 2>&1`, bin, file, filepath.Join(tmp, "out"))
	cmd.Env = append(os.Environ(), "TMPDIR="+tmp)
	p, _ := testkit.StartLine(t, cmd, regexp.MustCompile(`^\[2/40\] `), 2*time.Minute)
	// The second a moment after the first, once the first has been taken
	// (two at once reach the process as one): the window in which the
	// study is stopping its trial and has not yet removed its worktrees.
	if err := p.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	time.Sleep(secondSignalAfter)
	if err := p.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	_ = p.Wait() // exit 143, or killed by the second SIGTERM
	if !strings.Contains(p.Log(), "checked out in") {
		t.Fatalf("no worktree was made:\n%s", p.Log())
	}
	if list := strings.TrimSpace(gitIn("worktree", "list")); strings.Count(list, "\n") != 0 {
		t.Errorf("worktrees left registered after two signals:\n%s\nstudy output:\n%s", list, p.Log())
	}
	if left, _ := filepath.Glob(filepath.Join(tmp, "wirebench-rev-*")); len(left) != 0 {
		t.Errorf("temporary worktree directories left: %v", left)
	}
}
