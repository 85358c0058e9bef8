package reqlog

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
)

// ErrExists is a log file that is already there: a log is never written
// over an existing file unless asked (force).
var ErrExists = errors.New("file exists (use --force to replace it)")

// ErrSymlink is a log path that is a symbolic link: a log is never
// written through one, force or not.
var ErrSymlink = errors.New("is a symlink: a log is never written through one")

// Create makes the file of a new log, readable and writable by its owner
// only (a log holds what clients sent). It is created exclusively
// (O_CREATE|O_EXCL, which a symbolic link fails too, dangling or not), so
// it never replaces a file and never follows a link. With force an
// existing regular file is removed first (a new file: the old one's mode
// does not carry over) and a device or FIFO (/dev/null) is written in
// place; a link or a directory is refused all the same. A link is told
// as one (ErrSymlink, with where it points), force or not: "file exists,
// use --force" would send the user to a flag that cannot help, and a
// dangling link does not look like an existing file.
func Create(path string, force bool) (*os.File, error) {
	const mode = os.O_WRONLY | os.O_CREATE | os.O_EXCL | noFollow
	fi, err := os.Lstat(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
	case err != nil:
		return nil, err
	case fi.Mode()&fs.ModeSymlink != 0:
		return nil, symlinkError(path)
	case !force:
		return nil, fmt.Errorf("%s: %w", path, ErrExists)
	case fi.Mode()&(fs.ModeDevice|fs.ModeNamedPipe) != 0:
		return os.OpenFile(path, os.O_WRONLY|noFollow, 0)
	case !fi.Mode().IsRegular():
		return nil, fmt.Errorf("%s: not a regular file", path)
	default:
		if err := os.Remove(path); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return nil, err
		}
	}
	f, err := os.OpenFile(path, mode, 0o600)
	if errors.Is(err, fs.ErrExist) { // made meanwhile: still never replaced
		if fi, lerr := os.Lstat(path); lerr == nil && fi.Mode()&fs.ModeSymlink != 0 {
			return nil, symlinkError(path)
		}
		return nil, fmt.Errorf("%s: %w", path, ErrExists)
	}
	return f, err
}

// symlinkError refuses the link at path, saying where it points and
// whether that exists (nothing was made there).
func symlinkError(path string) error {
	to, err := os.Readlink(path)
	if err != nil {
		return fmt.Errorf("%s %w", path, ErrSymlink)
	}
	state := "left as it was"
	if _, err := os.Stat(path); errors.Is(err, fs.ErrNotExist) {
		state = "which does not exist: nothing was created"
	}
	return fmt.Errorf("%s %w (it points to %s, %s)", path, ErrSymlink, to, state)
}
