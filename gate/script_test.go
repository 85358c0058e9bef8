package gate

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/wirebench/wirebench/internal/testkit"
)

// TestGateScriptExitCodes runs scripts/gate.sh itself, in a scratch git
// repository of two commits, with a go on PATH that builds a stand-in
// wirebench whose study writes an empty run and whose gate exits with the
// verdict asked for: the script's own control flow, in under a second. CI
// runs the script under `set -e` and fails on any non-zero exit, so an
// undecidable verdict must leave it with 0 unless STRICT=1.
func TestGateScriptExitCodes(t *testing.T) {
	for _, tool := range []string{"bash", "git", "flock"} {
		testkit.NeedTool(t, tool, "apt-get install "+tool)
	}
	script, err := filepath.Abs("../scripts/gate.sh")
	if err != nil {
		t.Fatal(err)
	}
	src, err := os.ReadFile(script)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	repo := filepath.Join(dir, "repo")
	bin := filepath.Join(dir, "bin")
	for _, d := range []string{filepath.Join(repo, "scripts"), bin, filepath.Join(dir, "tmp")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	write := func(path, text string, mode os.FileMode) {
		t.Helper()
		if err := os.WriteFile(path, []byte(text), mode); err != nil {
			t.Fatal(err)
		}
	}
	write(filepath.Join(repo, "scripts", "gate.sh"), string(src), 0o755)
	// The stand-in wirebench: `study run FILE --out DIR` makes a run
	// folder; `gate RUN …` exits $FAKE_GATE_CODE.
	fake := `#!/bin/sh
case "$1" in
study) mkdir -p "$5/gate-20260101T000000Z" ;;
gate) echo "cpu_per_req stand-in verdict"; exit "$FAKE_GATE_CODE" ;;
*) exit 9 ;;
esac
`
	write(filepath.Join(dir, "fakewb"), fake, 0o755)
	write(filepath.Join(bin, "go"), `#!/bin/sh
# go build -o OUT ./cmd/wirebench
[ "$1" = build ] && [ "$2" = -o ] || exit 9
cp "`+filepath.Join(dir, "fakewb")+`" "$3"
`, 0o755)
	git := func(args ...string) {
		t.Helper()
		cmd := exec.Command("git", args...)
		cmd.Dir = repo
		cmd.Env = append(os.Environ(), "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@localhost",
			"GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@localhost")
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	git("init", "-q", "-b", "main")
	write(filepath.Join(repo, "a.go"), "package a\n", 0o644)
	git("add", ".")
	git("commit", "-q", "-m", "base")
	write(filepath.Join(repo, "a.go"), "package a\n\nconst X = 1\n", 0o644)
	git("commit", "-q", "-am", "change")

	for _, tc := range []struct {
		verdict, strict string
		want            int
	}{
		{"0", "", 0},
		{"1", "", 1},
		{"3", "", 0}, // undecidable passes CI
		{"3", "1", 3},
		{"1", "1", 1},
		{"0", "1", 0},
		{"2", "", 2}, // the gate could not judge
	} {
		cmd := exec.Command("bash", filepath.Join(repo, "scripts", "gate.sh"))
		cmd.Dir = repo
		cmd.Env = append(os.Environ(), "PATH="+bin+string(os.PathListSeparator)+os.Getenv("PATH"),
			"TMPDIR="+filepath.Join(dir, "tmp"), "LOCK=none", "OUT="+filepath.Join(dir, "out"),
			"FAKE_GATE_CODE="+tc.verdict, "STRICT="+tc.strict)
		out, err := cmd.CombinedOutput()
		code := 0
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			code = ee.ExitCode()
		} else if err != nil {
			t.Fatal(err)
		}
		if code != tc.want {
			t.Errorf("verdict %s, STRICT=%q: gate.sh exited %d, want %d\n%s", tc.verdict, tc.strict, code, tc.want, out)
		}
		if !strings.Contains(string(out), "stand-in verdict") {
			t.Errorf("verdict %s: the stand-in gate did not run:\n%s", tc.verdict, out)
		}
	}
}
