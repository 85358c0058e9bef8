package flags

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/spf13/pflag"

	"github.com/wirebench/wirebench/load/keydist"
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
