package main

import (
	"fmt"
	"strings"

	"github.com/spf13/pflag"

	"github.com/wirebench/wirebench/load/flags"
)

// One flag library for every command: pflag, so that flags and arguments
// may come in any order (report run.json --format md) and short flags may
// be glued to their values (-c50). Long flags are also accepted with one
// dash (-http, -quick), as the standard library's flag package took them:
// scripts written against it keep working.

// flagSetHook, when set (by tests), sees every flag set before it parses:
// the way a test enumerates every flag of every command.
var flagSetHook func(cmd string, fs *pflag.FlagSet)

// newFlagSet returns a flag set whose errors come back to run (no os.Exit,
// nothing printed) and whose -h prints usage and every flag to stdout, once.
func newFlagSet(env *cliEnv, name, usage string) *pflag.FlagSet {
	fs := pflag.NewFlagSet("wirebench "+name, pflag.ContinueOnError)
	fs.SortFlags = false
	setUsage(env, fs, name, usage)
	return fs
}

// setUsage makes -h print "Usage: wirebench name usage" and the flags to
// stdout: help that was asked for is output, not an error (| less shows it).
// pflag calls Usage itself on -h and then returns ErrHelp, which
// parseFlags passes on: printing again there would print it twice.
func setUsage(env *cliEnv, fs *pflag.FlagSet, name, usage string) {
	fs.SetOutput(env.stderr)
	fs.Usage = func() {
		fmt.Fprintf(env.stdout, "Usage: wirebench %s %s\n", name, usage)
		if fs.HasAvailableFlags() {
			fmt.Fprintf(env.stdout, "\nFlags:\n%s", fs.FlagUsages())
		}
		fmt.Fprintln(env.stdout, "  -h, --help   print this help")
	}
}

// parseFlags parses args (flags.Parse) after showing the flag set to
// the test hook.
func parseFlags(fs *pflag.FlagSet, args []string) error {
	if flagSetHook != nil {
		flagSetHook(strings.TrimPrefix(fs.Name(), "wirebench "), fs)
	}
	return flags.Parse(fs, args)
}
