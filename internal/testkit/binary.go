package testkit

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

var binary struct {
	once sync.Once
	path string
	err  error
}

// Binary returns the path of the wirebench binary built from this
// checkout's sources, building it at most once per `go test` process. The
// binary lives in os.TempDir() under a name keyed by a hash of the
// module's non-test sources, so the test processes of several packages
// (and reruns) share one build; a lock file keeps two processes from
// building the same one at once. Skipped with -short.
func Binary(t testing.TB) string {
	t.Helper()
	if testing.Short() {
		t.Skip("runs the wirebench binary; skipped with -short")
	}
	binary.once.Do(func() { binary.path, binary.err = build() })
	if binary.err != nil {
		t.Fatalf("testkit: building wirebench: %v", binary.err)
	}
	return binary.path
}

func build() (string, error) {
	root, err := moduleRoot()
	if err != nil {
		return "", err
	}
	sum, err := sourceHash(root)
	if err != nil {
		return "", err
	}
	dir := filepath.Join(os.TempDir(), "wirebench-testkit")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	bin := filepath.Join(dir, "wirebench-"+sum[:16])
	lock, err := os.OpenFile(bin+".lock", os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		return "", err
	}
	defer lock.Close() // releases the lock
	if err := unix.Flock(int(lock.Fd()), unix.LOCK_EX); err != nil {
		return "", err
	}
	if _, err := os.Stat(bin); err == nil {
		now := time.Now()
		os.Chtimes(bin, now, now) // in use: not pruned
		return bin, nil
	}
	tmp := fmt.Sprintf("%s.%d.tmp", bin, os.Getpid())
	cmd := exec.Command("go", "build", "-o", tmp, "./cmd/wirebench")
	cmd.Dir = root
	if out, err := cmd.CombinedOutput(); err != nil {
		os.Remove(tmp)
		return "", fmt.Errorf("go build: %v\n%s", err, out)
	}
	if err := os.Rename(tmp, bin); err != nil {
		return "", err
	}
	prune(dir, bin)
	return bin, nil
}

// keepBinaries is how many binaries of other source states prune keeps
// besides the current one: each is ~50 MB, and a day of commits once
// left 376 of them (9 GB) in /tmp.
const keepBinaries = 8

// prune removes binaries of other source states not used for a day, and
// all but the keepBinaries most recently used. A lock file goes only
// when it is a day old, so a build holding it is never disturbed.
func prune(dir, keep string) {
	ents, _ := os.ReadDir(dir)
	type bin struct {
		path string
		used time.Time
	}
	var bins []bin
	for _, e := range ents {
		p := filepath.Join(dir, e.Name())
		if p == keep || p == keep+".lock" {
			continue
		}
		info, err := e.Info()
		if err != nil {
			continue
		}
		old := time.Since(info.ModTime()) > 24*time.Hour
		switch {
		case old:
			os.Remove(p)
		case !strings.HasSuffix(p, ".lock") && !strings.HasSuffix(p, ".tmp"):
			bins = append(bins, bin{p, info.ModTime()})
		}
	}
	sort.Slice(bins, func(i, j int) bool { return bins[i].used.After(bins[j].used) })
	for i := keepBinaries; i < len(bins); i++ {
		os.Remove(bins[i].path)
	}
}

// moduleRoot is the nearest directory upward from the working directory
// (the test's package) holding go.mod.
func moduleRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir, nil
		}
		up := filepath.Dir(dir)
		if up == dir {
			return "", fmt.Errorf("no go.mod above the working directory")
		}
		dir = up
	}
}

// sourceHash hashes what the build may read: every file of the module
// but tests, testdata, dot and node_modules directories and nested
// modules (their own go.mod) — so .go sources, go.mod, go.sum and the
// assets go:embed takes — with the Go version and build environment.
func sourceHash(root string) (string, error) {
	var files []string
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		name := d.Name()
		if d.IsDir() {
			if p != root && (strings.HasPrefix(name, ".") || name == "testdata" || name == "node_modules") {
				return filepath.SkipDir
			}
			if p != root {
				if _, err := os.Stat(filepath.Join(p, "go.mod")); err == nil {
					return filepath.SkipDir
				}
			}
			return nil
		}
		if strings.HasSuffix(name, "_test.go") || !d.Type().IsRegular() {
			return nil
		}
		// Every non-test file: .go sources and the assets go:embed reads.
		if st, err := d.Info(); err == nil && st.Size() < 64<<20 {
			files = append(files, p)
		}
		return nil
	})
	if err != nil {
		return "", err
	}
	sort.Strings(files)
	h := sha256.New()
	fmt.Fprintln(h, runtime.Version(), os.Getenv("GOFLAGS"), os.Getenv("CGO_ENABLED"), os.Getenv("GOEXPERIMENT"))
	for _, p := range files {
		rel, _ := filepath.Rel(root, p)
		f, err := os.Open(p)
		if err != nil {
			return "", err
		}
		fmt.Fprintf(h, "%s\x00", rel)
		_, err = io.Copy(h, f)
		f.Close()
		if err != nil {
			return "", err
		}
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}
