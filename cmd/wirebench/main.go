// Command wirebench is the CLI of the wirebench lab: flags in, library calls
// out. Each subcommand lives in its own file and registers itself in init.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"sort"
	"syscall"
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
type usageError struct{ err error }

func (e usageError) Error() string { return e.err.Error() }
func (e usageError) Unwrap() error { return e.err }

func usagef(format string, a ...any) error { return usageError{fmt.Errorf(format, a...)} }

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := run(ctx, &cliEnv{stdin: os.Stdin, stdout: os.Stdout, stderr: os.Stderr}, os.Args[1:])
	stop()
	os.Exit(code)
}

// run executes the CLI and returns the process exit code.
func run(ctx context.Context, env *cliEnv, args []string) int {
	if len(args) == 0 {
		printHelp(env.stderr)
		return 2
	}
	name := args[0]
	if name == "help" || name == "-h" || name == "--help" {
		if len(args) > 1 {
			if _, ok := commands[args[1]]; ok {
				return run(ctx, env, []string{args[1], "-h"})
			}
		}
		printHelp(env.stdout)
		return 0
	}
	c, ok := commands[name]
	if !ok {
		fmt.Fprintf(env.stderr, "wirebench: unknown command %q\n\n", name)
		printHelp(env.stderr)
		return 2
	}
	err := c.run(ctx, env, args[1:])
	switch {
	case err == nil:
		return 0
	case errors.Is(err, flag.ErrHelp):
		return 0
	case errors.As(err, new(usageError)):
		fmt.Fprintf(env.stderr, "wirebench %s: %v\n", name, err)
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
	fmt.Fprintln(w, "\nRun 'wirebench <command> -h' for the flags of a command.")
}

// newFlagSet returns a FlagSet whose errors come back to run (no os.Exit)
// and whose usage text lists every flag.
func newFlagSet(env *cliEnv, name, usage string) *flag.FlagSet {
	fs := flag.NewFlagSet("wirebench "+name, flag.ContinueOnError)
	fs.SetOutput(env.stderr)
	fs.Usage = func() {
		fmt.Fprintf(fs.Output(), "Usage: wirebench %s %s\n\nFlags:\n", name, usage)
		fs.PrintDefaults()
	}
	return fs
}

// parseFlags parses args and turns a flag error into a usageError; -h
// becomes flag.ErrHelp, which run reports as success.
func parseFlags(fs *flag.FlagSet, args []string) error {
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return err
		}
		return usageError{err}
	}
	return nil
}
