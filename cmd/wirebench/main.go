// Command wirebench is the CLI of the wirebench lab: flags in, library calls
// out. Each subcommand lives in its own file and registers itself in init.
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"sort"
	"strings"
	"syscall"

	"github.com/spf13/pflag"

	"github.com/wirebench/wirebench/load/flags"
)

// command is one subcommand. run gets the arguments after the subcommand
// name; it returns a usageError for bad flags (exit 2), any other error for
// a failure (exit 1).
type command struct {
	summary string
	run     func(ctx context.Context, env *cliEnv, args []string) error
}

// cliEnv is what a subcommand may touch: no direct use of os.Std* so that
// every command is testable as a function.
type cliEnv struct {
	stdin          io.Reader
	stdout, stderr io.Writer
}

var commands = map[string]command{}

func register(name string, c command) {
	if _, dup := commands[name]; dup {
		panic("duplicate command " + name)
	}
	commands[name] = c
}

// usageError marks an error caused by how the command was invoked.
// It is load/flags' own, so that the flag groups there fail the same way.
type usageError = flags.UsageError

func usagef(format string, a ...any) error { return flags.Usagef(format, a...) }

func main() {
	ctx, stop := signalContext()
	code := run(ctx, &cliEnv{stdin: os.Stdin, stdout: os.Stdout, stderr: os.Stderr}, os.Args[1:])
	stop()
	os.Exit(code)
}

// signalError is the cause of a context ended by SIGINT or SIGTERM, so
// that a command can say which and exit 128+n (130, 143) as shells do.
type signalError struct{ sig syscall.Signal }

func (e signalError) Error() string {
	return "interrupted by " + signalName(e.sig)
}
func (e signalError) ExitCode() int { return 128 + int(e.sig) }

// SignalName names the signal in a result's Stop (load/spec.Made.Run).
func (e signalError) SignalName() string { return signalName(e.sig) }

func signalName(s syscall.Signal) string {
	switch s {
	case syscall.SIGINT:
		return "SIGINT"
	case syscall.SIGTERM:
		return "SIGTERM"
	}
	return s.String()
}

// signalContext ends on the first SIGINT or SIGTERM with a signalError as
// its cause. The second signal is left to its default action: a run that
// does not stop in time can still be killed with another Ctrl-C.
func signalContext() (context.Context, func()) {
	ctx, cancel := context.WithCancelCause(context.Background())
	ch := make(chan os.Signal, 1)
	signal.Notify(ch, os.Interrupt, syscall.SIGTERM)
	done := make(chan struct{})
	go func() {
		select {
		case sig := <-ch:
			signal.Stop(ch)
			cancel(signalError{sig.(syscall.Signal)})
		case <-done:
		}
	}()
	return ctx, func() { signal.Stop(ch); close(done); cancel(nil) }
}

// interruption is the signal that ended ctx, if one did.
func interruption(ctx context.Context) (signalError, bool) {
	var se signalError
	ok := errors.As(context.Cause(ctx), &se)
	return se, ok
}

// run executes the CLI and returns the process exit code: 0 ok, 1 failed,
// 2 bad usage, or what an exitCoder error says (99 thresholds, 130/143 a
// run cut short by SIGINT/SIGTERM).
func run(ctx context.Context, env *cliEnv, args []string) int {
	if len(args) == 0 {
		printHelp(env.stderr)
		return 2
	}
	name := args[0]
	switch name {
	case "help", "-h", "--help", "-help":
		if len(args) > 1 {
			if _, ok := commands[args[1]]; ok {
				return run(ctx, env, []string{args[1], "-h"})
			}
			return unknownCommand(env, args[1])
		}
		printHelp(env.stdout)
		return 0
	case "--version", "-version", "-v":
		name = "version"
	}
	c, ok := commands[name]
	if !ok {
		return unknownCommand(env, name)
	}
	err := c.run(ctx, env, args[1:])
	switch {
	case err == nil:
		return 0
	case errors.Is(err, pflag.ErrHelp):
		return 0
	case errors.As(err, new(quietExit)):
		var q quietExit
		errors.As(err, &q)
		return q.ExitCode()
	case errors.As(err, new(usageError)):
		fmt.Fprintf(env.stderr, "wirebench %s: %v; see 'wirebench %s -h'\n", name, err, name)
		return 2
	default:
		fmt.Fprintf(env.stderr, "wirebench %s: %v\n", name, err)
		var ec exitCoder
		if errors.As(err, &ec) {
			return ec.ExitCode()
		}
		return 1
	}
}

// unknownCommand is one line with a suggestion and a pointer to the list.
func unknownCommand(env *cliEnv, name string) int {
	names := make([]string, 0, len(commands))
	for n := range commands {
		names = append(names, n)
	}
	hint := ""
	if strings.HasPrefix(name, "-") {
		hint = " (flags go after the command: wirebench <command> [flags])"
	} else if s := flags.Closest(name, names); s != "" {
		hint = " (did you mean " + s + "?)"
	}
	fmt.Fprintf(env.stderr, "wirebench: unknown command %q%s; see 'wirebench -h'\n", name, hint)
	return 2
}

// exitCoder lets an error choose a non-1 failure code (a failed threshold, say).
type exitCoder interface{ ExitCode() int }

func printHelp(w io.Writer) {
	fmt.Fprintln(w, "wirebench — compare API wire formats, protocols and request handling, fairly.")
	fmt.Fprintln(w, "\nUsage: wirebench <command> [flags] [args]\n\nCommands:")
	names := make([]string, 0, len(commands))
	for n := range commands {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		fmt.Fprintf(w, "  %-10s %s\n", n, commands[n].summary)
	}
	fmt.Fprintln(w, "\nRun 'wirebench <command> -h' for the flags of a command; 'wirebench --version' for the build.")
}
