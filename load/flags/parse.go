package flags

import (
	"errors"
	"fmt"
	"sort"
	"strings"

	"github.com/spf13/pflag"

	"github.com/wirebench/wirebench/internal/typo"
)

// Parse parses args as wirebench's commands do: flags and arguments in
// any order, short flags glued to their values (-c50), long flags with
// one dash too (-http, as the standard library's flag package took them).
// A flag error is a one-line UsageError with a "did you mean" where a
// flag name is close; -h is pflag.ErrHelp (fs.Usage already called).
func Parse(fs *pflag.FlagSet, args []string) error {
	args, err := longSingleDash(fs, args)
	if err != nil {
		return UsageError{Err: err}
	}
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, pflag.ErrHelp) {
			return err
		}
		// -cnocurrency fails as -c with the value "nocurrency"; the
		// likelier story is a misspelt --concurrency.
		var ie *pflag.InvalidValueError
		if errors.As(err, &ie) {
			for _, a := range args {
				if len(a) > 2 && a[0] == '-' && a[1] != '-' && strings.HasSuffix(a, ie.GetValue()) && didYouMeanFlag(fs, a[1:]) != "" {
					return UsageError{Err: unknownFlag(fs, a)}
				}
			}
		}
		return UsageError{Err: flagError(fs, err)}
	}
	return nil
}

// longSingleDash rewrites -name to --name when name is a long flag (the
// standard library's spelling), leaving shorthands (-c 5, -c5, -kq) and
// the values of flags alone. A single-dash word that is neither a long
// flag nor starts with a shorthand is an unknown flag, with a suggestion.
func longSingleDash(fs *pflag.FlagSet, args []string) ([]string, error) {
	out := make([]string, 0, len(args))
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a == "--" {
			return append(out, args[i:]...), nil
		}
		if len(a) < 2 || a[0] != '-' {
			out = append(out, a)
			continue
		}
		long := strings.HasPrefix(a, "--")
		name, _, hasValue := strings.Cut(strings.TrimLeft(a, "-"), "=")
		var f *pflag.Flag
		switch {
		case long || name == "": // -= and ---x: pflag's syntax errors
			f = fs.Lookup(name)
		case len(name) == 1 && fs.ShorthandLookup(name) != nil:
			f = fs.ShorthandLookup(name)
		case fs.Lookup(name) != nil:
			f, a = fs.Lookup(name), "-"+a
		case fs.ShorthandLookup(name[:1]) != nil:
			// A chain or a glued value (-kq, -c50): pflag's to read.
			out = append(out, a)
			continue
		case name == "help" || name == "h":
			out = append(out, "--help")
			continue
		default:
			return nil, unknownFlag(fs, "-"+name)
		}
		out = append(out, a)
		if f != nil && !hasValue && f.NoOptDefVal == "" && i+1 < len(args) {
			out = append(out, args[i+1]) // the value, even if it starts with -
			i++
		}
	}
	return out, nil
}

// flagError rewrites pflag's errors as one line that names the flag as
// typed and suggests a close name.
func flagError(fs *pflag.FlagSet, err error) error {
	var ne *pflag.NotExistError
	if errors.As(err, &ne) {
		if s := ne.GetSpecifiedShortnames(); s != "" {
			return fmt.Errorf("unknown shorthand flag -%s%s", ne.GetSpecifiedName(), didYouMeanFlag(fs, s))
		}
		return unknownFlag(fs, "--"+ne.GetSpecifiedName())
	}
	return err
}

func unknownFlag(fs *pflag.FlagSet, typed string) error {
	return fmt.Errorf("unknown flag %s%s", typed, didYouMeanFlag(fs, strings.TrimLeft(typed, "-")))
}

// didYouMeanFlag is " (did you mean --x?)" for the long flag closest to
// name, or "" when none is close.
func didYouMeanFlag(fs *pflag.FlagSet, name string) string {
	var names []string
	fs.VisitAll(func(f *pflag.Flag) { names = append(names, f.Name) })
	if s := Closest(name, names); s != "" {
		return " (did you mean --" + s + "?)"
	}
	return ""
}

// Closest is the candidate nearest to s by edit distance, if it is near
// enough to be a typo: at most 2 edits, and fewer than half of s.
// Ties go to the alphabetically first, so the answer is stable.
func Closest(s string, candidates []string) string {
	sort.Strings(candidates)
	best, bestD := "", 3
	for _, c := range candidates {
		d := typo.Distance(strings.ToLower(s), strings.ToLower(c))
		if d < bestD && 2*d < max(len(s), len(c)) {
			best, bestD = c, d
		}
	}
	if best == "" {
		// A prefix of a long name is a guess too: --concur, --thresh.
		for _, c := range candidates {
			if len(s) >= 3 && strings.HasPrefix(c, s) {
				return c
			}
		}
	}
	return best
}

// Aliases keeps old long names working (--o for --output), without
// listing them in the help.
func Aliases(fs *pflag.FlagSet, old map[string]string) {
	fs.SetNormalizeFunc(func(_ *pflag.FlagSet, name string) pflag.NormalizedName {
		if n, ok := old[name]; ok {
			return pflag.NormalizedName(n)
		}
		return pflag.NormalizedName(name)
	})
}
