package results

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// ErrNoResultFiles marks a directory without result files (yet).
var ErrNoResultFiles = errors.New("no *.json or *.jsonl result files")

// ReadParts reads the load results of every input, as wirebench merge
// does: files, directories (their *.json and *.jsonl files, sorted;
// hidden and temporary files skipped) and - for stdin (to be named once).
// Each result is named by its file, and its place when a file holds
// several; each is validated (ValidateLoad).
func ReadParts(stdin io.Reader, inputs []string) ([]Part, error) {
	var parts []Part
	for _, in := range inputs {
		if in == "-" {
			ps, err := readStream(stdin, "stdin")
			if err != nil {
				return nil, err
			}
			parts = append(parts, ps...)
			continue
		}
		fi, err := os.Stat(in)
		if err != nil {
			return nil, err
		}
		files := []string{in}
		if fi.IsDir() {
			if files, err = resultFiles(in); err != nil {
				return nil, err
			}
		}
		for _, path := range files {
			ps, err := readFileParts(path)
			if err != nil {
				return nil, err
			}
			parts = append(parts, ps...)
		}
	}
	return parts, nil
}

// resultFiles lists a directory's result files.
func resultFiles(dir string) ([]string, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	var files []string
	for _, e := range entries {
		n := e.Name()
		if e.IsDir() || strings.HasPrefix(n, ".") || !(strings.HasSuffix(n, ".json") || strings.HasSuffix(n, ".jsonl")) {
			continue
		}
		files = append(files, filepath.Join(dir, n))
	}
	sort.Strings(files)
	if len(files) == 0 {
		return nil, fmt.Errorf("%s: %w", dir, ErrNoResultFiles)
	}
	return files, nil
}

func readFileParts(path string) ([]Part, error) {
	if err := CheckFileSize(path); err != nil {
		return nil, err
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return readStream(f, path)
}

// readStream reads the results on one stream, at most
// MaxFileSize bytes of it.
func readStream(r io.Reader, name string) ([]Part, error) {
	lr := &io.LimitedReader{R: r, N: MaxFileSize + 1}
	rs, err := ReadLoads(lr)
	if lr.N <= 0 {
		return nil, fmt.Errorf("%s: larger than %d MiB", name, MaxFileSize>>20)
	}
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	if len(rs) == 0 {
		return nil, fmt.Errorf("%s: no result in it", name)
	}
	parts := make([]Part, len(rs))
	for i, r := range rs {
		parts[i] = Part{Name: name, Result: r}
		if len(rs) > 1 {
			parts[i].Name = fmt.Sprintf("%s (result %d)", name, i+1)
		}
		if err := ValidateLoad(r); err != nil {
			return nil, fmt.Errorf("%s: %w", parts[i].Name, err)
		}
	}
	return parts, nil
}
