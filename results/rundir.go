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
