//go:build unix

package reqlog

import "syscall"

// noFollow refuses a symbolic link in the last element of a path.
const noFollow = syscall.O_NOFOLLOW
