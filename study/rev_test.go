package study

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/wirebench/wirebench/internal/testkit"
)

const revStudy = `name: gate
trials: 2
build: {command: ["sh", "-c", "cp cost built-cost"]}
load: {url: "http://127.0.0.1:{port}/", concurrency: 2}
server: {command: ["./srv", "{port}"]}
cells:
  - name: base
    rev: main
  - name: change
    rev: HEAD
`

func TestParseRev(t *testing.T) {
	def, err := Parse("/x/gate.yaml", []byte(revStudy), noFiles)
	if err != nil {
		t.Fatal(err)
	}
	if def.Order != OrderABBA || len(def.Builds) != 0 {
		t.Errorf("order %q, study builds %v: want abba and the build moved into the rev cells", def.Order, def.Builds)
	}
	for i, rev := range []string{"main", "HEAD"} {
		c := def.Cells[i]
		if c.Rev != rev || c.revLine != 8+2*i || c.Build == nil || c.Build.Args[2] != "cp cost built-cost" || c.Build.Dir != "/x" {
			t.Errorf("cell %d: rev %q line %d build %+v", i, c.Rev, c.revLine, c.Build)
		}
	}
	// A cell without a rev keeps the study-wide build, run once in the
	// working tree; the rev cell gets its own copy.
	mixed := strings.Replace(revStudy, "    rev: HEAD\n", "", 1)
	if def, err = Parse("/x/gate.yaml", []byte(mixed), noFiles); err != nil {
		t.Fatal(err)
	}
	if len(def.Builds) != 1 || def.Cells[0].Build == nil || def.Cells[1].Build != nil || def.Order != OrderABBA {
		t.Errorf("mixed: builds %v, cells' builds %v %v, order %q", def.Builds, def.Cells[0].Build, def.Cells[1].Build, def.Order)
	}
	if def, err = Parse("/x/a.yaml", []byte(core), noFiles); err != nil || def.Order != OrderShuffled {
		t.Errorf("no rev: order %q, %v", def.Order, err)
	}
	if def, err = Parse("/x/a.yaml", []byte("order: abba\n"+core), noFiles); err != nil || def.Order != OrderABBA {
		t.Errorf("order: abba: %q, %v", def.Order, err)
	}
}

func TestParseRevErrors(t *testing.T) {
	for _, tc := range []struct{ edit, want string }{
		{"    rev: HEAD\n|    rev: -HEAD\n", "gate.yaml:10: cells[1] (change).rev: \"-HEAD\" starts with '-'"},
		{"    rev: HEAD\n|    rev: main..HEAD\n", "gate.yaml:10: cells[1] (change).rev: \"main..HEAD\" is a range"},
		{"    rev: HEAD\n|    rev: \"HEAD 1\"\n", "gate.yaml:10: cells[1] (change).rev: \"HEAD 1\" contains a space"},
		{"    rev: HEAD\n|    rev: HEAD\n    url: http://127.0.0.1:8080/\n", "gate.yaml:10: cells[1] (change).rev: a cell with a rev is built and started per trial"},
		{"    rev: HEAD\n|    rev: [a]\n", "gate.yaml:10: cells[1].rev: want a string"},
		{"cells:|order: random\ncells:", "gate.yaml:6: order: \"random\" (want abba or shuffled)"},
		{"    rev: HEAD\n|    server: {command: [\"{worktree}/srv\"]}\n", "gate.yaml:9: cells (change): {worktree} is the checkout of the cell's rev"},
		{"    rev: HEAD\n|    server: {command: [\"{wortkree}/srv\"]}\n", "unknown placeholder {wortkree}"},
	} {
		old, new, _ := strings.Cut(tc.edit, "|")
		text := strings.Replace(revStudy, old, new, 1)
		if text == revStudy {
			t.Fatalf("edit %q changed nothing", tc.edit)
		}
		_, err := Parse("gate.yaml", []byte(text), noFiles)
		if err == nil || !errors.Is(err, ErrStudyFile) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%q: error %v, want %q", new, err, tc.want)
		}
	}
}

func TestABBAOrder(t *testing.T) {
	var got []int
	for _, r := range abbaOrder(2, 4) {
		got = append(got, r.cell)
	}
	if want := []int{0, 1, 1, 0, 0, 1, 1, 0}; !slices.Equal(got, want) {
		t.Errorf("abbaOrder(2, 4) = %v, want %v", got, want)
	}
	if n := len(abbaOrder(3, 3)); n != 9 {
		t.Errorf("abbaOrder(3, 3) has %d trials", n)
	}
}

func TestVarsDir(t *testing.T) {
	v := vars{worktree: "/tmp/wt/src", repo: "/home/me/repo"}
	for in, want := range map[string]string{
		"/home/me/repo":           "/tmp/wt/src",
		"/home/me/repo/bench":     "/tmp/wt/src/bench",
		"/home/me/repo-other/x":   "/home/me/repo-other/x",
		"/home/me":                "/home/me",
		"":                        "",
		"/home/me/repo/../repo/a": "/tmp/wt/src/a",
	} {
		if got := v.dir(in); got != want {
			t.Errorf("dir(%q) = %q, want %q", in, got, want)
		}
	}
	if got := (vars{}).dir("/a"); got != "/a" {
		t.Errorf("no worktree: %q", got)
	}
}

// gitRepo makes a repository with the study file's directory bench/ and
// one commit per cost ("0s", "2ms", ...), tagged c0, c1, ...; it returns
// the study file's path.
func gitRepo(t *testing.T, costs ...string) string {
	t.Helper()
	testkit.NeedTool(t, "git", "apt-get install -y git")
	root := t.TempDir()
	run := func(args ...string) {
		t.Helper()
		cmd := exec.Command("git", append([]string{"-C", root}, args...)...)
		cmd.Env = append(withoutGitEnv(os.Environ()), "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@t", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@t")
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	run("init", "-q", "-b", "main")
	bench := filepath.Join(root, "bench")
	if err := os.Mkdir(bench, 0o755); err != nil {
		t.Fatal(err)
	}
	for i, c := range costs {
		if err := os.WriteFile(filepath.Join(bench, "cost"), []byte(c+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		run("add", "-A")
		run("commit", "-q", "--allow-empty", "-m", "cost "+c)
		run("tag", "c"+string(rune('0'+i)))
	}
	return filepath.Join(bench, "gate.yaml")
}

// TestRunRevCells is a study of two revs of one repository: each checked
// out once in a temporary worktree, built there (the build copies the
// rev's cost file), its server run there (it reads what the build
// wrote), trials in ABBA order, and every worktree gone afterwards.
func TestRunRevCells(t *testing.T) {
	if testing.Short() {
		t.Skip("starts servers and runs load; skipped with -short")
	}
	path := gitRepo(t, "0s", "1ms")
	bin, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	text := `name: gate
trials: 4
warmup: 100ms
duration: 500ms
build: {command: ["sh", "-c", "cp cost built-cost"]}
server:
  command: ["` + bin + `", "-addr", "127.0.0.1:{port}", "-burn-file", "built-cost"]
  env: {` + testServerEnv + `: "1", WT: "{worktree}"}
  ready: "tcp://127.0.0.1:{port}"
load: {url: "http://127.0.0.1:{port}/", concurrency: 2, expect_body_contains: ok}
cells:
  - name: base
    rev: c0
  - name: change
    rev: c1
`
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	def, err := ParseFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var lines []string
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	res, err := Run(ctx, def, Options{Seed: 1, Ports: testPorts(), Progress: func(s string) { lines = append(lines, s) }})
	if err != nil {
		t.Fatalf("%v\n%s", err, strings.Join(lines, "\n"))
	}
	var worktrees []string
	for _, l := range lines {
		if _, dir, ok := strings.Cut(l, "checked out in "); ok {
			worktrees = append(worktrees, dir)
		}
	}
	if len(worktrees) != 2 {
		t.Fatalf("worktrees %v from progress:\n%s", worktrees, strings.Join(lines, "\n"))
	}
	for _, wt := range worktrees {
		if _, err := os.Stat(wt); !os.IsNotExist(err) {
			t.Errorf("worktree %s still there: %v", wt, err)
		}
	}
	out, _ := exec.Command("git", "-C", filepath.Dir(path), "worktree", "list").CombinedOutput()
	if n := strings.Count(strings.TrimSpace(string(out)), "\n"); n != 0 {
		t.Errorf("git still lists worktrees:\n%s", out)
	}
	if res.Options.Order != OrderABBA || len(res.Trials) != 8 {
		t.Fatalf("order %v, %d trials", res.Options.Order, len(res.Trials))
	}
	var order []string
	p99 := map[string][]time.Duration{}
	for _, tr := range res.Trials {
		if tr.Error != "" {
			t.Fatalf("trial %d of %s: %s", tr.Index, tr.Cell, tr.Error)
		}
		order = append(order, strings.TrimPrefix(tr.Cell, "gate/"))
		p99[tr.Cell] = append(p99[tr.Cell], tr.Load.Latency.Quantile(0.5))
	}
	if want := []string{"base", "change", "change", "base", "base", "change", "change", "base"}; !slices.Equal(order, want) {
		t.Errorf("order %v, want %v", order, want)
	}
	for i, c := range res.Cells {
		if c.Rev != []string{"c0", "c1"}[i] || len(c.Commit) != 40 {
			t.Errorf("cell %s: rev %q commit %q", c.ID, c.Rev, c.Commit)
		}
	}
	// The change burns 1 ms per response: its every median is above the
	// base's slowest (which burns nothing).
	if slices.Min(p99["gate/change"]) < time.Millisecond || slices.Max(p99["gate/base"]) >= time.Millisecond {
		t.Errorf("medians: base %v, change %v: the rev's own cost did not reach its server", p99["gate/base"], p99["gate/change"])
	}
}

// TestRunRevFailures: a rev that is not a commit names the file and line;
// a build that fails stops the study; either way no worktree is left.
func TestRunRevFailures(t *testing.T) {
	path := gitRepo(t, "0s")
	for _, tc := range []struct{ rev, build, want string }{
		{"nope", "true", `gate.yaml:8: cells (base).rev: "nope" is not a commit`},
		{"c0", "false", "study: build in "},
	} {
		text := strings.NewReplacer("REV", tc.rev, "BUILD", tc.build).Replace(`name: gate
trials: 1
build: {command: ["BUILD"]}
load: {url: "http://127.0.0.1:{port}/"}
server: {command: ["./srv", "{port}"]}
cells:
  - name: base
    rev: REV
  - name: change
    rev: c0
`)
		if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		def, err := ParseFile(path)
		if err != nil {
			t.Fatal(err)
		}
		_, err = Run(context.Background(), def, Options{Progress: func(string) {}})
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("rev %s build %s: error %v, want %q", tc.rev, tc.build, err, tc.want)
		}
		out, _ := exec.Command("git", "-C", filepath.Dir(path), "worktree", "list").CombinedOutput()
		if n := strings.Count(strings.TrimSpace(string(out)), "\n"); n != 0 {
			t.Errorf("worktrees left after a failure:\n%s", out)
		}
	}
}
