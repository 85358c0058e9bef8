package study

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/spf13/pflag"

	"github.com/wirebench/wirebench/load/flags"
)

// TestFlagsApply: study's flags read into the options and the study's
// cells; those that cannot be used are usage errors naming the flag.
func TestFlagsApply(t *testing.T) {
	apply := func(args ...string) (Definition, *Flags, error) {
		var f Flags
		fs := pflag.NewFlagSet("study", pflag.ContinueOnError)
		f.Register(fs)
		if err := fs.Parse(args); err != nil {
			t.Fatal(err)
		}
		if err := f.Check(); err != nil {
			return Definition{}, &f, err
		}
		def, err := Lookup("formats")
		if err != nil {
			t.Fatal(err)
		}
		def, err = f.Apply(context.Background(), fs, def)
		return def, &f, err
	}
	all, _, err := apply()
	if err != nil {
		t.Fatal(err)
	}
	def, f, err := apply("--cells", "json", "--client-cpus", "0", "--server-cpu-quota", "off", "--serve-args", "--delay 1ms", "--slo", "p99<20ms")
	if err != nil {
		t.Fatal(err)
	}
	o := f.Options
	if len(def.Cells) == 0 || len(def.Cells) >= len(all.Cells) || len(o.ClientCPUs) != 1 || o.ServerCPUQuota != -1 ||
		len(o.ServeArgs) != 2 || o.Capacity == nil || len(o.Capacity.SLO) != 1 {
		t.Fatalf("%d of %d cells, options %+v", len(def.Cells), len(all.Cells), o)
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--trials", "1000"}, "--trials 1000: want 0..100"},
		{[]string{"--kv-pipeline", "1"}, "--kv-pipeline: the depths of --key-dist's twins"},
		{[]string{"--data-key", "id"}, "need --data FILE"},
		{[]string{"--cells", "("}, "--cells:"},
		{[]string{"--server-cpu-quota", "lots"}, "--server-cpu-quota"},
	} {
		_, _, err := apply(tc.args...)
		if !errors.As(err, new(flags.UsageError)) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%v: %v, want a usage error with %q", tc.args, err, tc.want)
		}
	}
}
