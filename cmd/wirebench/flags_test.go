package main

import (
	"errors"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/spf13/pflag"
)

// invocations reach each command's flag parsing: every registered command,
// and study init, which has its own flags.
func invocations() [][]string {
	var out [][]string
	for name := range commands {
		out = append(out, []string{name})
	}
	out = append(out, []string{"study", "init"})
	sort.Slice(out, func(i, j int) bool { return strings.Join(out[i], " ") < strings.Join(out[j], " ") })
	return out
}

// captureFlags runs `wirebench <inv> -h` and returns the flag set the
// command parsed, with what -h printed. Not parallel: it sets the hook.
func captureFlags(t *testing.T, inv []string) (*pflag.FlagSet, int, string, string) {
	t.Helper()
	var fs *pflag.FlagSet
	flagSetHook = func(_ string, f *pflag.FlagSet) { fs = f }
	defer func() { flagSetHook = nil }()
	code, out, errs := runCLI(t, append(slices.Clone(inv), "-h")...)
	if fs == nil {
		t.Fatalf("wirebench %v -h parsed no flags", inv)
	}
	return fs, code, out, errs
}

// validValue is a value of the flag's type that parses.
func validValue(t *testing.T, f *pflag.Flag) string {
	switch f.Value.Type() {
	case "bool":
		return "true"
	case "int", "int64", "uint64", "float64":
		return "1"
	case "duration":
		return "1s"
	case "string", "stringArray", "stringSlice":
		return "x"
	}
	t.Errorf("--%s: no valid value known for type %s (add it to validValue)", f.Name, f.Value.Type())
	return ""
}

// TestEveryFlagOfEveryCommand parses every flag of every command in each
// spelling it accepts (--name v, --name=v, -name v, and its shorthand),
// and checks -h: printed once, on stdout, exit 0, listing every flag.
func TestEveryFlagOfEveryCommand(t *testing.T) {
	total := 0
	for _, inv := range invocations() {
		fs, code, out, errs := captureFlags(t, inv)
		name := strings.Join(inv, " ")
		if code != 0 || errs != "" || strings.Count(out, "Usage: wirebench "+inv[0]) != 1 {
			t.Errorf("wirebench %s -h: exit %d, want 0, usage once on stdout; stdout %q stderr %q", name, code, out, errs)
		}
		fs.VisitAll(func(f *pflag.Flag) {
			total++
			if !strings.Contains(out, "--"+f.Name) {
				t.Errorf("wirebench %s -h does not list --%s", name, f.Name)
			}
			v := validValue(t, f)
			forms := [][]string{{"--" + f.Name + "=" + v}}
			if f.NoOptDefVal == "" {
				forms = append(forms, []string{"--" + f.Name, v}, []string{"-" + f.Name, v})
				if f.Shorthand != "" {
					forms = append(forms, []string{"-" + f.Shorthand, v}, []string{"-" + f.Shorthand + v})
				}
			} else {
				forms = append(forms, []string{"--" + f.Name}, []string{"-" + f.Name})
				if f.Shorthand != "" {
					forms = append(forms, []string{"-" + f.Shorthand})
				}
			}
			for _, args := range forms {
				f.Changed = false
				if err := parseFlags(fs, append(args, "positional")); err != nil {
					t.Errorf("wirebench %s %v: %v", name, args, err)
					continue
				}
				if !f.Changed || !slices.Equal(fs.Args(), []string{"positional"}) {
					t.Errorf("wirebench %s %v: changed %v, args %q", name, args, f.Changed, fs.Args())
				}
			}
		})
	}
	if total < 100 {
		t.Errorf("saw %d flags in all; the commands have more than 100", total)
	}
}

// TestHelpEveryCommand: -h, --help and `help X` print the usage once to
// stdout and exit 0, for every command.
func TestHelpEveryCommand(t *testing.T) {
	t.Parallel()
	for _, inv := range invocations() {
		for _, args := range [][]string{append(slices.Clone(inv), "-h"), append(slices.Clone(inv), "--help"), append([]string{"help"}, inv...)} {
			if len(inv) > 1 && args[0] == "help" {
				continue // help takes a command name
			}
			code, out, errs := runCLI(t, args...)
			if code != 0 || errs != "" || strings.Count(out, "Usage: wirebench") != 1 {
				t.Errorf("wirebench %v: exit %d, want 0 and usage once on stdout; stdout %q, stderr %q", args, code, out, errs)
			}
		}
	}
	code, out, errs := runCLI(t, "--help")
	if code != 0 || errs != "" || !strings.Contains(out, "Commands:") {
		t.Errorf("wirebench --help: exit %d, stdout %q, stderr %q", code, out, errs)
	}
}

// TestMisspeltFlagEveryCommand: a misspelt flag is one line naming it,
// suggesting the right one and pointing at -h, exit 2 — in every command,
// with two dashes and with one.
func TestMisspeltFlagEveryCommand(t *testing.T) {
	tested := 0
	for _, inv := range invocations() {
		fs, _, _, _ := captureFlags(t, inv)
		var target string
		fs.VisitAll(func(f *pflag.Flag) {
			if target == "" && len(f.Name) >= 5 {
				target = f.Name
			}
		})
		if target == "" {
			continue // version: no flags to misspell
		}
		tested++
		typo := target[:1] + target[2:3] + target[1:2] + target[3:] // two letters swapped
		for _, dash := range []string{"--", "-"} {
			args := append(slices.Clone(inv), dash+typo)
			code, out, errs := runCLI(t, args...)
			want := "unknown flag " + dash + typo + " (did you mean --" + target + "?); see 'wirebench " + inv[0] + " -h'\n"
			if code != 2 || out != "" || !strings.HasSuffix(errs, want) || strings.Count(errs, "\n") != 1 {
				t.Errorf("wirebench %v: exit %d, want 2 and one line ending %q; stdout %q stderr %q", args, code, want, out, errs)
			}
		}
	}
	if tested < 7 {
		t.Errorf("misspelt flags tested in %d commands, want at least 7", tested)
	}
}

func TestMisspeltCommand(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ arg, want string }{
		{"serv", `unknown command "serv" (did you mean serve?); see 'wirebench -h'`},
		{"lood", `unknown command "lood" (did you mean load?)`},
		{"raport", `(did you mean report?)`},
		{"xyzzy", `unknown command "xyzzy"; see 'wirebench -h'`},
		{"--quick", `flags go after the command`},
	} {
		code, out, errs := runCLI(t, tc.arg)
		if code != 2 || out != "" || !strings.Contains(errs, tc.want) || strings.Count(errs, "\n") != 1 {
			t.Errorf("wirebench %s: exit %d, want 2 and one line with %q; got %q", tc.arg, code, tc.want, errs)
		}
	}
}

func TestUnknownFlagShapes(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"serve", "--htp", "x"}, "wirebench serve: unknown flag --htp (did you mean --http?); see 'wirebench serve -h'"},
		{[]string{"load", "--concurency", "5", "http://x/"}, "unknown flag --concurency (did you mean --concurrency?)"},
		{[]string{"load", "-Z", "http://x/"}, "unknown flag -Z;"},
		{[]string{"load", "-kZ", "http://x/"}, "unknown shorthand flag -Z;"},
		{[]string{"report", "--format"}, "flag needs an argument: --format"},
		{[]string{"load", "-="}, "unknown shorthand flag -="}, // panicked in longSingleDash (found by FuzzParseFlags)
		{[]string{"load", "-c", "x", "http://x/"}, `invalid argument "x" for "-c, --concurrency"`},
		{[]string{"study", "formats", "--trials", "lots"}, `invalid argument "lots" for "--trials"`},
	} {
		code, _, errs := runCLI(t, tc.args...)
		if code != 2 || !strings.Contains(errs, tc.want) || strings.Count(errs, "\n") != 1 {
			t.Errorf("wirebench %v: exit %d, want 2 and one line with %q; got %q", tc.args, code, tc.want, errs)
		}
	}
}

// TestSingleDashLongFlags: the standard library's -name spelling still
// works, and does not swallow shorthands or values.
func TestSingleDashLongFlags(t *testing.T) {
	t.Parallel()
	fs := pflag.NewFlagSet("t", pflag.ContinueOnError)
	c := fs.IntP("concurrency", "c", 0, "")
	k := fs.BoolP("insecure", "k", false, "")
	q := fs.BoolP("quiet", "q", false, "")
	h := fs.StringArrayP("header", "H", nil, "")
	o := fs.String("out", "", "")
	if err := parseFlags(fs, []string{"-concurrency", "3", "-kq", "-H", "-out", "-out=o.json", "url"}); err != nil {
		t.Fatal(err)
	}
	if *c != 3 || !*k || !*q || len(*h) != 1 || (*h)[0] != "-out" || *o != "o.json" || !slices.Equal(fs.Args(), []string{"url"}) {
		t.Errorf("c=%d k=%v q=%v H=%q out=%q args=%q", *c, *k, *q, *h, *o, fs.Args())
	}
	if err := parseFlags(fs, []string{"-c50"}); err != nil || *c != 50 {
		t.Errorf("-c50: %v, c=%d", err, *c)
	}
}

// FuzzParseFlags: any argument list either parses or is a one-line usage
// error; single-dash long names never lose a value or a positional.
func FuzzParseFlags(f *testing.F) {
	for _, s := range []string{"-c 5 url", "-concurrency=5 -kq url", "--htp x", "-H -out url", "-- -c", "-c", "-cnocurrency", "-=", "--=x", "-h"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		fs := pflag.NewFlagSet("fuzz", pflag.ContinueOnError)
		fs.Usage = func() {}
		fs.IntP("concurrency", "c", 0, "")
		fs.BoolP("insecure", "k", false, "")
		fs.BoolP("quiet", "q", false, "")
		fs.StringArrayP("header", "H", nil, "")
		fs.String("out", "", "")
		err := parseFlags(fs, strings.Fields(s))
		if err != nil && !errors.Is(err, pflag.ErrHelp) {
			var ue usageError
			if !errors.As(err, &ue) || strings.Contains(err.Error(), "\n") {
				t.Fatalf("%q: %v is not a one-line usage error", s, err)
			}
		}
	})
}
