package results

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
)

// link is os.Link; tests replace it to take the path of file systems
// without hard links.
var link = os.Link

// ErrExists marks an output file that is already there and was not
// replaced: results are never overwritten unless asked to (--force).
var ErrExists = errors.New("results: file exists (use --force to replace it)")

// Write writes r as indented JSON.
func (r *Study) Write(w io.Writer) error {
	if err := EncodeJSON(w, r, "  "); err != nil {
		return fmt.Errorf("results: write: %w", err)
	}
	return nil
}

// EncodeJSON writes v as one JSON value and a newline, indented by
// indent ("": one line), as every result file is written. HTML is not
// escaped: a result is read by jq and people, never embedded in a page
// as is, and a threshold reads "rps>1000", not "rps\u003e1000".
func EncodeJSON(w io.Writer, v any, indent string) error {
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	if indent != "" {
		enc.SetIndent("", indent)
	}
	return enc.Encode(v)
}

// CheckNew fails with ErrExists when path exists and force is false. It
// lets a command refuse before a long run rather than after it; WriteFile
// checks again, atomically.
func CheckNew(path string, force bool) error {
	if force {
		return nil
	}
	if _, err := os.Lstat(path); err == nil {
		return fmt.Errorf("%s: %w", path, ErrExists)
	} else if !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("results: %w", err)
	}
	return nil
}

// WriteFile writes what write produces to path, whole or not at all: into
// a temporary file in the same directory (so the rename cannot cross file
// systems), synced, then moved into place. An interrupted write leaves
// the previous file intact and at most a stray .tmp file behind.
//
// Without force an existing path is never replaced: the temporary file is
// hard-linked to path, which fails if path exists — atomically, so two
// writers racing for one name cannot both win.
func WriteFile(path string, force bool, write func(io.Writer) error) (err error) {
	dir, base := filepath.Split(path)
	if dir == "" {
		dir = "."
	}
	if err := CheckNew(path, force); err != nil {
		return err
	}
	if fi, err := os.Stat(path); err == nil && force && !fi.Mode().IsRegular() && !fi.IsDir() {
		return writeSpecial(path, write)
	}
	tmp, err := os.CreateTemp(dir, "."+base+".*.tmp")
	if err != nil {
		return fmt.Errorf("results: %w", err)
	}
	defer func() {
		if err != nil {
			tmp.Close()
			os.Remove(tmp.Name())
		}
	}()
	if err := write(tmp); err != nil {
		return err
	}
	if err := tmp.Sync(); err != nil {
		return fmt.Errorf("results: write %s: %w", path, err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("results: write %s: %w", path, err)
	}
	// CreateTemp makes 0600 files; a result is for everyone to read.
	if err := os.Chmod(tmp.Name(), 0o644); err != nil {
		return fmt.Errorf("results: write %s: %w", path, err)
	}
	if force {
		if err := os.Rename(tmp.Name(), path); err != nil {
			return fmt.Errorf("results: write %s: %w", path, err)
		}
		return nil
	}
	switch err := link(tmp.Name(), path); {
	case err == nil:
		os.Remove(tmp.Name())
		return nil
	case errors.Is(err, os.ErrExist):
		return fmt.Errorf("%s: %w", path, ErrExists)
	}
	// No hard links on this file system (some FUSE mounts, FAT): claim
	// the name with an exclusive create, then rename over our own empty
	// placeholder. For a moment an empty file holds the name; never an
	// existing result is replaced.
	claim, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		if errors.Is(err, os.ErrExist) {
			return fmt.Errorf("%s: %w", path, ErrExists)
		}
		return fmt.Errorf("results: write %s: %w", path, err)
	}
	claim.Close()
	if err := os.Rename(tmp.Name(), path); err != nil {
		os.Remove(path)
		return fmt.Errorf("results: write %s: %w", path, err)
	}
	return nil
}

// writeSpecial writes into an existing device, pipe or socket (--out
// /dev/null, /dev/stdout, a FIFO) in place: renaming a file over
// /dev/null replaced the device with a regular file for the whole
// machine, and every program's discarded output then filled /dev.
func writeSpecial(path string, write func(io.Writer) error) error {
	f, err := os.OpenFile(path, os.O_WRONLY, 0)
	if err != nil {
		return fmt.Errorf("results: write %s: %w", path, err)
	}
	if err := write(f); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("results: write %s: %w", path, err)
	}
	return nil
}
