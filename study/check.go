package study

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"time"

	"github.com/wirebench/wirebench/results"
)

// Command is a command a study runs itself: a build step (once, before any
// trial) or a check (after each trial's load). Args, Dir and Env are
// templates like a Server's.
type Command struct {
	Args []string
	Dir  string
	Env  []string // KEY=VALUE, added to this process's environment
	// Timeout bounds the command (default 10 minutes for builds, 1 minute
	// for checks).
	Timeout time.Duration
}

// Default timeouts of commands.
const (
	DefaultBuildTimeout = 10 * time.Minute
	DefaultCheckTimeout = time.Minute
)

// ErrCommand marks a build or check command that failed.
var ErrCommand = errors.New("command failed")

// run runs c and returns its exit code and the tail of its output.
func (c Command) run(ctx context.Context, v vars, timeout time.Duration) (exit int, output string, err error) {
	args := v.expandAll(c.Args)
	if len(args) == 0 {
		return -1, "", errors.New("empty command")
	}
	if c.Timeout > 0 {
		timeout = c.Timeout
	}
	dir := v.dir(c.Dir)
	path, err := resolveCommand(args[0], dir)
	if err != nil {
		return -1, "", fmt.Errorf("%s: %w", args[0], err)
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	var out tailBuffer
	out.max = logTail
	cmd := exec.CommandContext(ctx, path, args[1:]...)
	cmd.Args[0] = args[0]
	cmd.Dir, cmd.Env, cmd.Stdout, cmd.Stderr = dir, append(os.Environ(), v.expandAll(c.Env)...), &out, &out
	cmd.WaitDelay = 5 * time.Second // a child holding the pipes open does not hang us
	err = cmd.Run()
	var ee *exec.ExitError
	switch {
	case err == nil:
		return 0, out.String(), nil
	case ctx.Err() == context.DeadlineExceeded:
		return -1, out.String(), fmt.Errorf("%w: %q timed out after %v", ErrCommand, strings.Join(args, " "), timeout)
	case errors.As(err, &ee):
		return ee.ExitCode(), out.String(), fmt.Errorf("%w: %q: %v", ErrCommand, strings.Join(args, " "), err)
	}
	return -1, out.String(), fmt.Errorf("%w: %q: %v", ErrCommand, strings.Join(args, " "), err)
}

// Check runs around each trial of a cell: Before once the server is
// ready (before the warm-up), After once the measured load is done (the
// server still running). An error from either fails the trial, and the
// report says why.
type Check struct {
	Name   string
	Before func(ctx context.Context, e *TrialEnv) error
	// Start runs after the warm-up, right before the measured load.
	Start func(ctx context.Context, e *TrialEnv) error
	After func(ctx context.Context, e *TrialEnv) error
	// templates are the strings the check expands, for counting ports.
	templates []string
}

// TrialEnv is what a check sees of its trial.
type TrialEnv struct {
	// Trial is the trial's record; checks add what they measure.
	Trial *results.Trial
	v     vars
}

// Expand substitutes the trial's ports ({port}, ...) into s.
func (e *TrialEnv) Expand(s string) string { return e.v.expand(s) }

// CommandCheck is a check command run after the load: a non-zero exit
// (or a timeout) fails the trial; the outcome is recorded either way.
func CommandCheck(c Command) Check {
	return Check{
		Name:      strings.Join(c.Args, " "),
		templates: append(append([]string(nil), c.Args...), c.Env...),
		After: func(ctx context.Context, e *TrialEnv) error {
			start := time.Now()
			exit, out, err := c.run(ctx, e.v, DefaultCheckTimeout)
			e.Trial.Checks = append(e.Trial.Checks, results.CheckResult{
				Command: e.v.expandAll(c.Args), OK: err == nil, ExitCode: exit, Output: out, Duration: time.Since(start),
			})
			if err != nil {
				return fmt.Errorf("check failed: %v%s", err, lastLine(out))
			}
			return nil
		},
	}
}

// lastLine is ": <the last line of out>", or "" for no output.
func lastLine(out string) string {
	out = strings.TrimSpace(out)
	if out == "" {
		return ""
	}
	if i := strings.LastIndexByte(out, '\n'); i >= 0 {
		out = out[i+1:]
	}
	return ": " + out
}

// tailBuffer keeps the last max bytes written, for error messages.
type tailBuffer struct {
	max int
	b   bytes.Buffer
}

func (t *tailBuffer) Write(p []byte) (int, error) {
	t.b.Write(p)
	if t.b.Len() > 2*t.max {
		keep := t.b.Bytes()[t.b.Len()-t.max:]
		nb := append([]byte(nil), keep...)
		t.b.Reset()
		t.b.Write(nb)
	}
	return len(p), nil
}

func (t *tailBuffer) String() string {
	b := t.b.Bytes()
	if len(b) > t.max {
		b = b[len(b)-t.max:]
	}
	return strings.TrimSpace(string(b))
}
