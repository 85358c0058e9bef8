package main

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

// TestStudyOutputIsNotSource: a study writes by default where it cannot be
// mistaken for source: a folder of the repository that holds no Go files
// (results/ is the results package) and that .gitignore ignores.
func TestStudyOutputIsNotSource(t *testing.T) {
	_, stdout, stderr := runCLI(t, "study", "-h")
	m := regexp.MustCompile(`--out directory .*\(default "([^"]+)"\)`).FindStringSubmatch(stdout + stderr)
	if m == nil {
		t.Fatalf("study -h names no --out default:\n%s%s", stdout, stderr)
	}
	dir := filepath.Join("..", "..", m[1])
	if gofiles, _ := filepath.Glob(filepath.Join(dir, "*.go")); len(gofiles) > 0 {
		t.Errorf("study output goes to %s/, which holds Go sources (%s)", m[1], gofiles[0])
	}
	ignore, err := os.ReadFile("../../.gitignore")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains("\n"+string(ignore), "\n/"+m[1]+"/\n") {
		t.Errorf(".gitignore does not ignore the study output folder /%s/", m[1])
	}
}

// TestReportAndCompareReadFolders: report and compare take a run's folder
// for its results.json, and a study's --out folder for its newest run.
func TestReportAndCompareReadFolders(t *testing.T) {
	out := t.TempDir()
	now := time.Now()
	var runs []string
	for i, src := range []string{gateStudy(t, 8, 3), gateStudy(t, 8, 1)} {
		dir := filepath.Join(out, "gate-2026112"+string(rune('0'+i))+"T000000Z")
		b, err := os.ReadFile(src)
		if err != nil {
			t.Fatal(err)
		}
		f := filepath.Join(dir, "results.json")
		if err := os.Mkdir(dir, 0o755); err != nil || os.WriteFile(f, b, 0o644) != nil {
			t.Fatal(dir, err)
		}
		at := now.Add(time.Duration(i-2) * time.Minute)
		if err := os.Chtimes(f, at, at); err != nil {
			t.Fatal(err)
		}
		runs = append(runs, dir)
	}
	code, stdout, stderr := runCLI(t, "report", out)
	if code != 0 || !strings.Contains(stderr, "reading "+filepath.Join(runs[1], "results.json")+" (the newest of 2 runs") || !strings.Contains(stdout, "no significant difference") {
		t.Errorf("report %s: exit %d\nstdout %.300s\nstderr %s", out, code, stdout, stderr)
	}
	code, stdout, stderr = runCLI(t, "compare", runs[0], runs[1])
	if code != 0 || stderr != "" || !strings.Contains(stdout, "vs old") {
		t.Errorf("compare of two run folders: exit %d\nstdout %.300s\nstderr %s", code, stdout, stderr)
	}
}
