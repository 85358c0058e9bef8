// Package flags is wirebench load's command line as a library: flag
// types, range checks and the flag groups load, replay and capacity share
// (the key-value scenarios' memtier-style flags), registered on a
// pflag.FlagSet and read into the options of load/scenario and load/spec.
// A tool of one's own gets the CLI's names, defaults, checks and messages;
// its errors for flags that cannot be used are UsageError.
package flags

import (
	"fmt"
	"math"
	"strings"
	"time"

	"github.com/wirebench/wirebench/load"
)

// UsageError is an error in how a command was invoked: a flag out of
// range or flags that contradict each other (wirebench exits 2).
type UsageError struct{ Err error }

func (e UsageError) Error() string { return e.Err.Error() }
func (e UsageError) Unwrap() error { return e.Err }

// Usagef is a UsageError with a formatted message.
func Usagef(format string, a ...any) error { return UsageError{fmt.Errorf(format, a...)} }

// Duration is a duration flag that also takes a bare number of seconds
// ("-d 5"), as wrk, hey and k6 users type it (load.ParseDuration).
type Duration struct{ D *time.Duration }

func (f Duration) String() string {
	if f.D == nil { // pflag's zero-value probe
		return "0s"
	}
	return f.D.String()
}

// Type names the value in help: "duration".
func (f Duration) Type() string { return "duration" }

// Set parses s, as load.ParseDuration does.
func (f Duration) Set(s string) error {
	d, err := load.ParseDuration(s)
	if err != nil {
		return fmt.Errorf("%s", Message(err))
	}
	*f.D = d
	return nil
}

// CheckInt is a UsageError naming flag when v is outside lo..hi (why, if
// given, follows the range).
func CheckInt(flag string, v, lo, hi int64, why string) error {
	if v < lo || v > hi {
		return Usagef("%s %d: want %d..%d%s", flag, v, lo, hi, why)
	}
	return nil
}

// CheckFloat is a UsageError naming flag when v is NaN or outside lo..hi.
func CheckFloat(flag string, v, lo, hi float64) error {
	if math.IsNaN(v) || v < lo || v > hi {
		return Usagef("%s %g: want %g..%g", flag, v, lo, hi)
	}
	return nil
}

// CheckDuration is a UsageError naming flag when v is outside lo..hi.
func CheckDuration(flag string, v, lo, hi time.Duration) error {
	if v < lo || v > hi {
		return Usagef("%s %v: want %v..%v", flag, v, lo, hi)
	}
	return nil
}

// First is the first error of errs that is not nil: a list of checks,
// the first that fails.
func First(errs ...error) error {
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}

// Message is err's text without the load packages' "load: ..."
// prefixes, which a command's own "wirebench load:" would double.
func Message(err error) string {
	m := err.Error()
	for _, p := range []string{"load: invalid options: ", "load: bad threshold: ", "load: "} {
		m = strings.TrimPrefix(m, p)
	}
	return m
}
