package study

import (
	"context"
	"errors"
	"os"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

// ownerFile sits in a rev worktree's temporary directory, beside its src/
// checkout, and holds the PID of the run that made it: a later run removes
// a worktree whose maker is gone, and leaves alone one a study running now
// is using.
const ownerFile = "wirebench-owner"

// revTempPrefix names the temporary directories of rev worktrees.
const revTempPrefix = "wirebench-rev-"

// removeStaleWorktrees removes the rev worktrees an earlier run of ours
// left registered in the repository at src (a run killed with SIGKILL, or
// a machine that went down): those under a wirebench-rev- directory of the
// temporary folder whose owner PID is no longer running. It returns the
// directories it removed.
func removeStaleWorktrees(ctx context.Context, src string) []string {
	list, err := git(ctx, src, "worktree", "list", "--porcelain")
	if err != nil {
		return nil
	}
	tmp, err := filepath.EvalSymlinks(os.TempDir())
	if err != nil {
		tmp = os.TempDir()
	}
	var removed []string
	for _, line := range strings.Split(list, "\n") {
		dir, ok := strings.CutPrefix(line, "worktree ")
		if !ok || filepath.Base(dir) != "src" {
			continue
		}
		parent := filepath.Dir(dir)
		if filepath.Dir(parent) != tmp && filepath.Dir(parent) != os.TempDir() ||
			!strings.HasPrefix(filepath.Base(parent), revTempPrefix) {
			continue // not one of ours
		}
		if ownerAlive(parent) {
			continue
		}
		removeWorktree(src, dir)
		removed = append(removed, dir)
	}
	// Worktrees whose directories are gone are only records: prune them.
	_, _ = git(ctx, src, "worktree", "prune")
	return removed
}

// ownerAlive reports whether the run that made the worktree directory dir
// still runs. A directory without a readable owner (one made before owners
// were written, or cut before its owner was) counts as alive only while it
// is young, so a run that is just checking out is never raced.
func ownerAlive(dir string) bool {
	b, err := os.ReadFile(filepath.Join(dir, ownerFile))
	if err != nil {
		st, serr := os.Stat(dir)
		return serr == nil && time.Since(st.ModTime()) < 10*time.Minute
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil || pid <= 0 {
		return false
	}
	if pid == os.Getpid() {
		return true
	}
	err = syscall.Kill(pid, 0)
	return err == nil || errors.Is(err, syscall.EPERM)
}

// writeOwner records this process as the maker of a worktree directory.
func writeOwner(dir string) error {
	return os.WriteFile(filepath.Join(dir, ownerFile), []byte(strconv.Itoa(os.Getpid())+"\n"), 0o600)
}

// guardSignals keeps a SIGINT or SIGTERM from killing the process while
// rev worktrees are registered in the user's repository. The first signal
// is the caller's to handle (the CLI cancels ctx, the study stops and its
// cleanup removes the worktrees); a second one, which would otherwise kill
// the process at once (`timeout` sends two), removes them here first and
// then takes the signal's default action. A signal nobody turns into a
// cancelled ctx within a second (a library caller that handles none) is
// treated like the second. stop ends the guard; it is safe to call twice.
func guardSignals(ctx context.Context, clean func()) (stop func()) {
	ch := make(chan os.Signal, 2)
	signal.Notify(ch, os.Interrupt, syscall.SIGTERM)
	done := make(chan struct{})
	var once sync.Once
	stop = func() { once.Do(func() { signal.Stop(ch); close(done) }) }
	go func() {
		seen := 0
		for {
			select {
			case <-done:
				return
			case sig := <-ch:
				seen++
				if seen == 1 {
					select {
					case <-ctx.Done():
						continue // the caller is stopping the study
					case <-time.After(time.Second):
					case <-done:
						return
					}
				}
				clean()
				stop()
				if s, ok := sig.(syscall.Signal); ok {
					// The default action now: the process ends as the
					// signal meant, its worktrees already removed.
					_ = syscall.Kill(os.Getpid(), s)
				}
				return
			}
		}
	}()
	return stop
}
