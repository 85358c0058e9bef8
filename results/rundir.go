package results

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// MaxRunDirTries bounds the suffixes NewRunDir tries for one second's
// name (study-T, study-T-2, … study-T-100): far more studies than can
// start within one second on one machine.
const MaxRunDirTries = 100

// NewRunDir creates a new, empty directory for one run of study under
// base (created if missing) and returns its path: base/<study>-<UTC time>,
// with "-2", "-3", … appended when that name is taken. The directory is
// created with os.Mkdir, which fails if the name exists, so two runs
// started within the same second never share (and overwrite) a directory.
func NewRunDir(base, study string) (string, error) {
	return newRunDir(base, study, time.Now())
}

func newRunDir(base, study string, now time.Time) (string, error) {
	if err := os.MkdirAll(base, 0o755); err != nil {
		return "", fmt.Errorf("results: %w", err)
	}
	name := fmt.Sprintf("%s-%s", dirName(study), now.UTC().Format("20060102T150405Z"))
	for i := 1; i <= MaxRunDirTries; i++ {
		dir := filepath.Join(base, name)
		if i > 1 {
			dir = fmt.Sprintf("%s-%d", dir, i)
		}
		err := os.Mkdir(dir, 0o755)
		if err == nil {
			return dir, nil
		}
		if !errors.Is(err, os.ErrExist) {
			return "", fmt.Errorf("results: %w", err)
		}
	}
	return "", fmt.Errorf("results: %d directories named %s* exist already", MaxRunDirTries, filepath.Join(base, name))
}

// dirName makes a study's name safe as one path element: letters, digits,
// '.', '_' and '-' are kept, anything else (a '/', a space) becomes '-'.
func dirName(study string) string {
	b := []byte(study)
	for i, c := range b {
		ok := c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '.' || c == '_' || c == '-'
		if !ok {
			b[i] = '-'
		}
	}
	s := strings.Trim(string(b), ".")
	if s == "" {
		return "study"
	}
	return s
}

// ResultsFile is the results.json that path names: path itself if it is a
// file; in a directory, its results.json, or else the newest results.json
// among its run directories (NewRunDir's, one level down: a study's --out
// folder, which gains one per run). newest counts the run files found
// (0 when path named one directly); newest is chosen by modification time,
// then by name (run directories carry their start time).
func ResultsFile(path string) (file string, runs int, err error) {
	fi, err := os.Stat(path)
	if err != nil {
		return "", 0, err
	}
	if !fi.IsDir() {
		return path, 0, nil
	}
	if f := filepath.Join(path, "results.json"); fileExists(f) {
		return f, 0, nil
	}
	found, err := filepath.Glob(filepath.Join(globEscape(path), "*", "results.json"))
	if err != nil {
		return "", 0, err
	}
	var newest time.Time
	for _, f := range found {
		fi, err := os.Stat(f)
		if err != nil || !fi.Mode().IsRegular() {
			continue
		}
		runs++
		if t := fi.ModTime(); file == "" || t.After(newest) || (t.Equal(newest) && f > file) {
			file, newest = f, t
		}
	}
	if file == "" {
		return "", 0, fmt.Errorf("%w: %s has no results.json, nor any run directory with one", ErrResults, path)
	}
	return file, runs, nil
}

func fileExists(p string) bool {
	fi, err := os.Stat(p)
	return err == nil && fi.Mode().IsRegular()
}

// globEscape quotes the glob metacharacters of a literal path.
func globEscape(p string) string {
	var b strings.Builder
	for _, r := range p {
		if strings.ContainsRune(`*?[\`, r) {
			b.WriteByte('\\')
		}
		b.WriteRune(r)
	}
	return b.String()
}
