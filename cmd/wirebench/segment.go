package main

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/wirebench/wirebench/results"
)

// segmentOut resolves --out for a segment: a directory (an existing one,
// or a path ending in /) gets segment-<i>-of-<n>.json inside, so that the
// n pods of an Indexed Job can share one command line. A directory named
// with a trailing / is created.
func segmentOut(out string, seg results.Segment) (string, error) {
	if out == "" || out == "-" {
		return out, nil
	}
	fi, err := os.Stat(out)
	if isDir := err == nil && fi.IsDir(); !isDir && !strings.HasSuffix(out, "/") {
		return out, nil
	}
	if err := os.MkdirAll(out, 0o777); err != nil {
		return "", fmt.Errorf("--out: %w", err)
	}
	if seg.N < 1 {
		seg = results.Segment{I: 1, N: 1}
	}
	return filepath.Join(out, "segment-"+strings.ReplaceAll(seg.String(), "/", "-of-")+".json"), nil
}

// summaryWriter is where load prints its summary: stdout, unless the
// result itself goes there (--out -).
func summaryWriter(env *cliEnv, out string) io.Writer {
	if out == "-" {
		return env.stderr
	}
	return env.stdout
}
