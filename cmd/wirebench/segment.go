package main

import (
	"io"
)

// summaryWriter is where load prints its summary: stdout, unless the
// result itself goes there (--out -).
func summaryWriter(env *cliEnv, out string) io.Writer {
	if out == "-" {
		return env.stderr
	}
	return env.stdout
}
