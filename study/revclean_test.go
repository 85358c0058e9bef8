package study

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// TestRemoveStaleWorktrees: a rev worktree whose maker is gone (a run
// killed before its cleanup) is removed from the repository and the disk
// by the next run; one whose maker still runs, and a worktree that is not
// ours, are left alone.
func TestRemoveStaleWorktrees(t *testing.T) {
	t.Setenv("TMPDIR", t.TempDir())
	src := filepath.Dir(gitRepo(t, "0s"))
	ctx := context.Background()
	add := func(parent string) string {
		t.Helper()
		dir := filepath.Join(parent, "src")
		if _, err := git(ctx, src, "worktree", "add", "--detach", "--quiet", dir, "c0"); err != nil {
			t.Fatal(err)
		}
		return dir
	}
	// A PID that was a process of ours and has ended.
	gone := exec.Command("true")
	if err := gone.Run(); err != nil {
		t.Fatal(err)
	}
	mk := func(owner int) string {
		t.Helper()
		parent, err := os.MkdirTemp("", revTempPrefix)
		if err != nil {
			t.Fatal(err)
		}
		if owner > 0 {
			if err := os.WriteFile(filepath.Join(parent, ownerFile), []byte(strconv.Itoa(owner)), 0o600); err != nil {
				t.Fatal(err)
			}
		}
		return add(parent)
	}
	stale := mk(gone.ProcessState.Pid())
	live := mk(os.Getpid())
	young := mk(0) // no owner yet: a run that is checking out right now
	notOurs := add(filepath.Join(t.TempDir(), "other"))

	removed := removeStaleWorktrees(ctx, src)
	if !slices.Equal(removed, []string{stale}) {
		t.Errorf("removed %q, want only %q", removed, stale)
	}
	list, err := git(ctx, src, "worktree", "list", "--porcelain")
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(list, stale) {
		t.Errorf("git still lists the stale worktree:\n%s", list)
	}
	if _, err := os.Stat(filepath.Dir(stale)); !os.IsNotExist(err) {
		t.Errorf("stale worktree's directory still there: %v", err)
	}
	for _, keep := range []string{live, young, notOurs} {
		if !strings.Contains(list, keep) {
			t.Errorf("worktree %s removed; git lists:\n%s", keep, list)
		}
	}
}

// TestRemoveWorktreesCutWhileAdded: a `git worktree add` cut by a signal
// (the process group's: timeout and a terminal's Ctrl-C signal git too)
// leaves its worktree registered and locked ("initializing"), its folder
// perhaps already removed. Such a registration is removed by the run's
// own cleanup and, failing that, by the next run.
func TestRemoveWorktreesCutWhileAdded(t *testing.T) {
	t.Setenv("TMPDIR", t.TempDir())
	src := filepath.Dir(gitRepo(t, "0s"))
	ctx := context.Background()
	locked := func(owner int, dropDir bool) string {
		t.Helper()
		parent, err := os.MkdirTemp("", revTempPrefix)
		if err != nil {
			t.Fatal(err)
		}
		os.WriteFile(filepath.Join(parent, ownerFile), []byte(strconv.Itoa(owner)), 0o600)
		dir := filepath.Join(parent, "src")
		if _, err := git(ctx, src, "worktree", "add", "--detach", "--quiet", dir, "c0"); err != nil {
			t.Fatal(err)
		}
		if _, err := git(ctx, src, "worktree", "lock", "--reason", "initializing", dir); err != nil {
			t.Fatal(err)
		}
		if dropDir {
			os.RemoveAll(parent)
		}
		return dir
	}
	gone := exec.Command("true")
	if err := gone.Run(); err != nil {
		t.Fatal(err)
	}
	own := locked(os.Getpid(), false)
	removeWorktree(src, own)
	staleGone := locked(gone.ProcessState.Pid(), true)
	staleHere := locked(gone.ProcessState.Pid(), false)
	removeStaleWorktrees(ctx, src)
	list, err := git(ctx, src, "worktree", "list", "--porcelain")
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range []string{own, staleGone, staleHere} {
		if strings.Contains(list, d) {
			t.Errorf("git still lists %s:\n%s", d, list)
		}
	}
}
