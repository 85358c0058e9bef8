package results

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestReadParts: a directory's result files are read in name order, its
// hidden files skipped; a directory without any is ErrNoResultFiles.
func TestReadParts(t *testing.T) {
	t.Parallel()
	old, err := os.ReadFile("testdata/load-v1.json")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	for _, n := range []string{"b.json", "a.json", ".tmp-c.json", "notes.txt"} {
		if err := os.WriteFile(filepath.Join(dir, n), old, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	parts, err := ReadParts(strings.NewReader(string(old)), []string{dir, "-"})
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, p := range parts {
		names = append(names, filepath.Base(p.Name))
	}
	if strings.Join(names, " ") != "a.json b.json stdin" || parts[0].Result.Requests != 1281 {
		t.Errorf("parts %v", names)
	}
	if _, err := ReadParts(nil, []string{t.TempDir()}); !errors.Is(err, ErrNoResultFiles) {
		t.Errorf("empty directory: %v", err)
	}
}
