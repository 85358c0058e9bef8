package flags

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/spf13/pflag"

	"github.com/wirebench/wirebench/load/keydist"
	"github.com/wirebench/wirebench/load/scenario"
)

func TestDurationTakesSeconds(t *testing.T) {
	var d time.Duration
	f := Duration{D: &d}
	if err := f.Set("1.5"); err != nil || d != 1500*time.Millisecond {
		t.Fatalf("1.5: %v, %v", d, err)
	}
	if err := f.Set("-1"); err == nil || strings.HasPrefix(err.Error(), "load:") {
		t.Fatalf("-1: %v, want an error without the library's prefix", err)
	}
}

func TestChecksAreUsageErrors(t *testing.T) {
	err := First(nil, CheckInt("-c", 0, 1, 10, ""), CheckFloat("-r", -1, 0, 1))
	if !errors.As(err, new(UsageError)) || err.Error() != "-c 0: want 1..10" {
		t.Fatalf("%v, want the first failing check as a UsageError", err)
	}
}

// TestKVRead: the text flags read into the options, contradictions
// refused naming the flags, as the kv-* scenarios need them.
func TestKVRead(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string // error text, or "" to pass
		ok   func(k *KV) bool
	}{
		{[]string{"--key-pattern", "Z:Z", "--key-zipf-exp", "0.99"}, "", func(k *KV) bool {
			return k.Options.KeyDist.Pattern == keydist.Zipf && k.Options.KeyDist.Exp == 0.99
		}},
		{[]string{"--key-maximum", "99"}, "", func(k *KV) bool { return k.Options.Keys == 0 && k.Options.KeyMax == 99 }},
		{[]string{"--key-dist", "zipf", "--key-pattern", "Z"}, "--key-dist and --key-pattern say the same", nil},
		{[]string{"--key-pattern", "Z:G"}, "one pattern for SET and GET", nil},
		{[]string{"--key-zipf-exp", "1"}, "--key-zipf-exp applies to Zipf keys", nil},
		{[]string{"--key-stddev", "3"}, "apply to Gaussian keys", nil},
		{[]string{"--data-size-range", "1-9", "--value-size", "4"}, "--value-size and --data-size-range", nil},
	} {
		var k KV
		fs := pflag.NewFlagSet("t", pflag.ContinueOnError)
		k.Register(fs)
		if err := fs.Parse(tc.args); err != nil {
			t.Fatal(err)
		}
		err := k.Read(fs)
		switch {
		case tc.want == "" && (err != nil || !tc.ok(&k)):
			t.Errorf("%v: %v, options %+v", tc.args, err, k.Options)
		case tc.want != "" && (!errors.As(err, new(UsageError)) || !strings.Contains(err.Error(), tc.want)):
			t.Errorf("%v: %v, want a UsageError with %q", tc.args, err, tc.want)
		}
	}
}

// TestKVKeyMaximumZero: --key-maximum 0 is a key space of its own (key 0
// alone, memtier's meaning), not the default 10,000 keys, and it
// contradicts a --key-minimum above it or another --keys.
func TestKVKeyMaximumZero(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string // error text, or "" for the key space 0..0
	}{
		{[]string{"--key-maximum", "0"}, ""},
		{[]string{"--key-minimum", "0", "--key-maximum", "0"}, ""},
		{[]string{"--keys", "1", "--key-maximum", "0"}, ""},
		{[]string{"--key-minimum", "5", "--key-maximum", "0"}, "--key-maximum 0 below --key-minimum 5"},
		{[]string{"--keys", "5", "--key-maximum", "0"}, "disagree"},
	} {
		var k KV
		fs := pflag.NewFlagSet("t", pflag.ContinueOnError)
		k.Register(fs)
		if err := fs.Parse(tc.args); err != nil {
			t.Fatal(err)
		}
		err := k.Read(fs)
		if err == nil {
			k.Options.Name, k.Options.URL = scenario.ScenarioKVGet, "redis://127.0.0.1:6379"
			var s *scenario.KV
			if s, err = scenario.NewKV(k.Options); err == nil {
				o := s.Options()
				if tc.want == "" && (o.Keys != 1 || o.KeyMin != 0 || o.KeyMax != 0) {
					t.Errorf("%v: keys %d, %d..%d, want key 0 alone", tc.args, o.Keys, o.KeyMin, o.KeyMax)
				}
			}
		}
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("%v: %v", tc.args, err)
		case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
			t.Errorf("%v: %v, want an error with %q", tc.args, err, tc.want)
		}
	}
}
