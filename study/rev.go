package study

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"

	yaml "go.yaml.in/yaml/v3"
)

// Cells with a git rev: two revisions of one repository as cells of one
// interleaved study (the regression gate's base and change, issue 37).
//
// Each distinct rev is resolved to a commit and checked out once, before
// any build, in a temporary `git worktree` of the repository holding the
// study file; the worktrees are removed when the study ends, however it
// ends. A rev cell's build (its own, or the study's top-level build) runs
// in its worktree, and every directory of the cell that lies in the
// repository (the study file's directory by default, dir: keys) maps to
// the same place in the worktree, so `build: go build -o srv .` and
// `server: ./srv` build and run the rev's code. {worktree} is the
// worktree's root, for the rare command that needs it spelt out.

// Trial orders (Definition.Order).
const (
	OrderShuffled = "shuffled"
	OrderABBA     = "abba"
)

// Limits of revs.
const (
	maxRevLen  = 256
	gitTimeout = 2 * time.Minute // one git command (a worktree of a large repository)
)

// ErrRev marks a rev that cannot be checked out.
var ErrRev = errors.New("study: bad rev")

// rev checks a cell's rev: a git revision, not an option or a range.
func (p *parser) rev(cn *yaml.Node, cs *cellSpec, c *Cell, path string) {
	line := lineOf(cn, "rev")
	r := cs.Rev
	switch {
	case cs.URL != "":
		p.errorf(line, "%s.rev: a cell with a rev is built and started per trial; url names a server already running", path)
	case len(r) > maxRevLen:
		p.errorf(line, "%s.rev: longer than %d characters", path, maxRevLen)
	case strings.HasPrefix(r, "-"):
		p.errorf(line, "%s.rev: %q starts with '-' (a revision, not an option)", path, r)
	case strings.Contains(r, ".."):
		p.errorf(line, "%s.rev: %q is a range; give one revision (main, HEAD~1, v1.2, a commit hash)", path, r)
	case strings.ContainsFunc(r, func(c rune) bool { return c <= ' ' || c == 0x7f }):
		p.errorf(line, "%s.rev: %q contains a space or control character", path, r)
	default:
		c.Rev, c.revLine = r, line
	}
}

// revDefaults makes the top-level build each rev cell's own (run in its
// worktree) and keeps it as a study-wide build only for cells without a
// rev; it checks {worktree} is used only by rev cells, and the order.
func (p *parser) revDefaults(doc *yaml.Node, spec *fileSpec, def *Definition) {
	anyRev, allRev := false, len(def.Cells) > 0
	for i := range def.Cells {
		c := &def.Cells[i]
		if c.Rev == "" {
			allRev = false
			if usesWorktree(c) {
				p.errorf(cellLine(doc, c.Label), "cells (%s): {worktree} is the checkout of the cell's rev, and this cell has no rev", c.Label)
			}
			continue
		}
		anyRev = true
		if c.Build == nil && len(def.Builds) > 0 {
			b := def.Builds[0]
			c.Build = &b
		}
	}
	if allRev {
		def.Builds = nil
	}
	switch spec.Order {
	case "":
		def.Order = OrderShuffled
		if anyRev {
			def.Order = OrderABBA
		}
	case OrderABBA, OrderShuffled:
		def.Order = spec.Order
	default:
		p.errorf(lineOf(doc, "order"), "order: %q (want abba or shuffled)", spec.Order)
	}
}

// cellLine is the line of the cell named label, for messages.
func cellLine(doc *yaml.Node, label string) int {
	cells := valueNode(doc, "cells")
	if cells == nil {
		return 0
	}
	for _, cn := range cells.Content {
		if v := valueNode(cn, "name"); v != nil && v.Value == label {
			return cn.Line
		}
	}
	return cells.Line
}

func usesWorktree(c *Cell) bool {
	var ts []string
	if c.Server != nil {
		ts = append(append(append(ts, c.Server.Command...), c.Server.Env...), c.Server.Ready)
	}
	if c.Build != nil {
		ts = append(append(ts, c.Build.Args...), c.Build.Env...)
	}
	for _, ch := range c.Checks {
		ts = append(ts, ch.templates...)
	}
	for _, t := range ts {
		if strings.Contains(t, "{worktree}") {
			return true
		}
	}
	return false
}

// checkout is one rev checked out in a temporary worktree.
type checkout struct {
	rev, commit string
	dir         string // the worktree's root
	repo        string // the repository's root, as the study file's paths spell it
}

// dir maps a directory in the study's repository into the cell's
// worktree; other directories are left alone.
func (v vars) dir(d string) string {
	if v.worktree == "" || v.repo == "" || d == "" {
		return d
	}
	rel, err := filepath.Rel(v.repo, d)
	if err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		return d
	}
	return filepath.Join(v.worktree, rel)
}

// vars are the cell's substitutions apart from the per-trial ports.
func (c Cell) vars(binary string) vars {
	v := vars{wirebench: binary}
	if c.checkout != nil {
		v.worktree, v.repo = c.checkout.dir, c.checkout.repo
	}
	return v
}

// checkoutRevs checks out every distinct rev of def's cells once and
// points the cells at their worktrees. cleanup removes the worktrees; it
// is safe to call whatever happened, and must be called.
func checkoutRevs(ctx context.Context, def *Definition, progress func(string)) (cleanup func(), err error) {
	var (
		mu   sync.Mutex // made and src: the signal guard cleans up too
		made []*checkout
		src  string // the study file's directory, where git runs
	)
	removeAll := func() {
		mu.Lock()
		defer mu.Unlock()
		for _, co := range made {
			removeWorktree(src, co.dir)
		}
		made = nil
	}
	stopGuard := func() {}
	cleanup = func() {
		removeAll()
		stopGuard()
	}
	byRev := map[string]*checkout{}
	for i := range def.Cells {
		c := &def.Cells[i]
		if c.Rev == "" {
			continue
		}
		if co, ok := byRev[c.Rev]; ok {
			c.checkout = co
			continue
		}
		at := def.Source
		if c.revLine > 0 {
			at = fmt.Sprintf("%s:%d", def.Source, c.revLine)
		}
		if src == "" {
			if def.Source == "" {
				return cleanup, fmt.Errorf("%w: cell %s: a rev needs a study file in a git repository", ErrRev, c.ID())
			}
			dir, err := filepath.Abs(filepath.Dir(def.Source))
			if err != nil {
				return cleanup, fmt.Errorf("%w: %s: %v", ErrRev, at, err)
			}
			mu.Lock()
			src = dir
			mu.Unlock()
			for _, stale := range removeStaleWorktrees(ctx, src) {
				progress("removed a worktree an earlier run left: " + stale)
			}
			stopGuard = guardSignals(ctx, removeAll)
		}
		prefix, err := git(ctx, src, "rev-parse", "--show-prefix")
		if err != nil {
			return cleanup, fmt.Errorf("%w: %s: cells (%s).rev: the study file is not in a git repository: %v", ErrRev, at, c.Label, err)
		}
		commit, err := git(ctx, src, "rev-parse", "--verify", "--quiet", "--end-of-options", c.Rev+"^{commit}")
		if err != nil {
			return cleanup, fmt.Errorf("%w: %s: cells (%s).rev: %q is not a commit of the repository at %s", ErrRev, at, c.Label, c.Rev, src)
		}
		tmp, err := os.MkdirTemp("", revTempPrefix)
		if err != nil {
			return cleanup, fmt.Errorf("%w: %v", ErrRev, err)
		}
		if err := writeOwner(tmp); err != nil {
			return cleanup, fmt.Errorf("%w: %v", ErrRev, err)
		}
		co := &checkout{rev: c.Rev, commit: commit, dir: filepath.Join(tmp, "src"),
			repo: filepath.Clean(filepath.Join(src, strings.Repeat("../", strings.Count(prefix, "/"))))}
		// The add runs to its end, a signal or not, and the guard's
		// cleanup waits for it: git cut midway leaves a locked
		// registration, and one removed while git still writes it comes
		// back. Checking out is short beside a study.
		mu.Lock()
		made = append(made, co)
		_, err = git(context.WithoutCancel(ctx), src, "worktree", "add", "--detach", "--quiet", co.dir, commit)
		mu.Unlock()
		if err != nil {
			return cleanup, fmt.Errorf("%w: %s: cells (%s).rev %s: git worktree add: %v", ErrRev, at, c.Label, c.Rev, err)
		}
		progress(fmt.Sprintf("rev %s = %.12s: checked out in %s", c.Rev, commit, co.dir))
		byRev[c.Rev], c.checkout = co, co
	}
	return cleanup, nil
}

// removeWorktree removes a worktree and its temporary directory. It runs
// on a fresh context: a study cut short by a signal still cleans up.
func removeWorktree(src, dir string) {
	ctx, cancel := context.WithTimeout(context.Background(), gitTimeout)
	defer cancel()
	// An add cut by a signal leaves its worktree locked ("initializing"),
	// which remove refuses without a second --force and prune skips.
	_, _ = git(ctx, src, "worktree", "unlock", dir)
	_, _ = git(ctx, src, "worktree", "remove", "--force", "--force", dir)
	_ = os.RemoveAll(filepath.Dir(dir))
	_, _ = git(ctx, src, "worktree", "prune")
}

// git runs git in dir and returns its trimmed output.
func git(ctx context.Context, dir string, args ...string) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, gitTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, "git", append([]string{"-C", dir}, args...)...)
	// A process group of its own: a terminal's Ctrl-C and timeout signal
	// the whole group, and git cut midway leaves a worktree locked; the
	// study decides when git stops (ctx).
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	// The study's repository, whatever a calling hook set.
	cmd.Env = withoutGitEnv(os.Environ())
	out, err := cmd.CombinedOutput()
	if err != nil {
		return "", fmt.Errorf("git %s: %v: %s", strings.Join(args, " "), err, strings.TrimSpace(string(out)))
	}
	return strings.TrimSpace(string(out)), nil
}

// withoutGitEnv drops the variables that point git at another repository.
func withoutGitEnv(env []string) []string {
	out := env[:0]
	for _, kv := range env {
		k, _, _ := strings.Cut(kv, "=")
		if k == "GIT_DIR" || k == "GIT_WORK_TREE" || k == "GIT_INDEX_FILE" || k == "GIT_PREFIX" {
			continue
		}
		out = append(out, kv)
	}
	return out
}

// abbaOrder runs round r's cells forward when r is even and backward when
// it is odd: A B, B A, A B, … — a linear drift of the machine over the
// run then weighs on every cell alike.
func abbaOrder(cells, trials int) []trialRef {
	var out []trialRef
	for r := range trials {
		for i := range cells {
			c := i
			if r%2 == 1 {
				c = cells - 1 - i
			}
			out = append(out, trialRef{cell: c, index: r})
		}
	}
	return out
}
