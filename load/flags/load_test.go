package flags

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/spf13/pflag"
)

// parsed is a Load registered on a fresh flag set and parsed from args.
func parsed(t *testing.T, args ...string) (*Load, *pflag.FlagSet) {
	t.Helper()
	var f Load
	fs := pflag.NewFlagSet("load", pflag.ContinueOnError)
	f.Register(fs)
	if err := fs.Parse(args); err != nil {
		t.Fatal(err)
	}
	return &f, fs
}

// TestLoadMadeRaw: load's flags make raw mode's client, with the
// engine's options as given and the defaults the CLI has.
func TestLoadMadeRaw(t *testing.T) {
	f, fs := parsed(t, "-c", "3", "-n", "7", "-m", "POST", "-b", "hi", "-H", "X-A: 1", "--expect-status", "200,201")
	if err := f.Check(fs); err != nil {
		t.Fatal(err)
	}
	m, err := f.Made(context.Background(), fs, []string{"http://127.0.0.1:1/x"})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	o := m.Options
	if m.Config.Scenario != "raw" || o.Concurrency != 3 || o.Requests != 7 || !o.EventLoop || o.Timeout.Seconds() != 10 {
		t.Fatalf("made %q with %+v", m.Config.Scenario, o)
	}
	if r := f.Raw; r.Method != "POST" || string(r.Body) != "hi" || len(r.Header) != 1 || len(r.ExpectStatus) != 2 {
		t.Fatalf("raw options %+v", r)
	}
}

// TestLoadRefuses: contradictions are one-line usage errors naming the
// flags, before anything is made.
func TestLoadRefuses(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--stages", "1s:5", "-d", "5s"}, "--stages sets the run's length: drop -d"},
		{[]string{"--open"}, "--open needs -r or --stages"},
		{[]string{"--cert", "c.pem"}, "--cert and --key go together"},
		{[]string{"--keys", "5"}, "--keys applies to the kv-* scenarios"},
		{[]string{"--speed", "2"}, "--speed applies to --replay"},
		{[]string{"--data-file", "x.csv"}, "--data-file feeds a --flow's variables"},
		{[]string{"-c", "0"}, "-c 0: want 1..10000"},
		{[]string{"--arrivals-seed", "3"}, "--arrivals applies to an open loop"},
	} {
		f, fs := parsed(t, tc.args...)
		err := f.Check(fs)
		if !errors.As(err, new(UsageError)) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%v: %v, want a UsageError with %q", tc.args, err, tc.want)
		}
	}
	f, fs := parsed(t)
	if _, err := f.Made(context.Background(), fs, nil); !errors.As(err, new(UsageError)) {
		t.Errorf("no URL: %v, want a UsageError", err)
	}
}

// TestSearchFlags: capacity's and replay's search flags read into the
// search's options; those that need --slo, or that it decides, refused.
func TestSearchFlags(t *testing.T) {
	var s Search
	fs := pflag.NewFlagSet("capacity", pflag.ContinueOnError)
	s.RegisterRates(fs)
	if err := fs.Parse([]string{"--slo", "p99<20ms", "--precision", "10%", "--no-confirm"}); err != nil {
		t.Fatal(err)
	}
	if err := s.Read(); err != nil {
		t.Fatal(err)
	}
	if o := s.Options; len(o.SLO) != 1 || o.Precision != 0.1 || o.ConfirmDuration != -1 {
		t.Fatalf("options %+v", o)
	}
	// --warmup 0 is none (negative in the options: their zero value is
	// the default), for capacity and replay's search alike.
	for _, reg := range []func(*Search, *pflag.FlagSet){(*Search).RegisterRates, (*Search).RegisterSpeeds} {
		for arg, want := range map[string]time.Duration{"0": -1, "0s": -1, "300ms": 300 * time.Millisecond} {
			var s Search
			fs := pflag.NewFlagSet("capacity", pflag.ContinueOnError)
			reg(&s, fs)
			if err := fs.Parse([]string{"--slo", "p99<20ms", "--warmup", arg}); err != nil {
				t.Fatal(err)
			}
			if s.Options.Warmup != want {
				t.Errorf("--warmup %s: %v, want %v", arg, s.Options.Warmup, want)
			}
		}
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--min-speed", "2"}, "--min-speed applies to the speed search (--slo)"},
		{[]string{"--slo", "p99<1s", "--min-speed", "0"}, "want 0 < min ≤ max"},
		{[]string{"--slo", "rps>5"}, "the rate is what the search finds"},
	} {
		var s Search
		fs := pflag.NewFlagSet("replay", pflag.ContinueOnError)
		s.RegisterSpeeds(fs)
		if err := fs.Parse(tc.args); err != nil {
			t.Fatal(err)
		}
		err := s.CheckSpeeds(fs)
		if err == nil {
			err = s.Read()
		}
		if !errors.As(err, new(UsageError)) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%v: %v, want a usage error with %q", tc.args, err, tc.want)
		}
	}
}
