package flags

import (
	"context"
	"errors"
	"io"
	"strings"
	"testing"

	"github.com/spf13/pflag"

	lflags "github.com/wirebench/wirebench/load/flags"
	"github.com/wirebench/wirebench/server"
)

// TestServeFlags: the defaults check and make the server's defaults;
// values out of range and flags without their companion are usage
// errors naming the flag.
func TestServeFlags(t *testing.T) {
	parse := func(args ...string) (*Serve, *pflag.FlagSet) {
		var f Serve
		fs := pflag.NewFlagSet("serve", pflag.ContinueOnError)
		f.Register(fs)
		if err := fs.Parse(args); err != nil {
			t.Fatal(err)
		}
		return &f, fs
	}
	f, fs := parse("--seed-users", "7", "--appendfsync", "always")
	if err := f.Check(); err != nil {
		t.Fatal(err)
	}
	done, err := f.Apply(context.Background(), fs, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if err := done(); err != nil {
		t.Fatal(err)
	}
	if o := f.Options; o.SeedUsers != 7 || o.HTTPAddr != server.DefaultHTTPAddr || o.Engine != server.EngineNetHTTP || o.KV.Logf == nil {
		t.Fatalf("options %+v", o)
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--engine", "fiber"}, "want nethttp or fasthttp"},
		{[]string{"--seed-todos", "-1"}, "--seed-todos -1: want 0..1000000"},
		{[]string{"--h2-stream-buffer", "4194304"}, "h2-stream-buffer"},
		{[]string{"--appendfsync", "sometimes"}, "-appendfsync"},
		{[]string{"--engine", "fasthttp", "--sqlite", "a.db"}, "-sqlite"},
	} {
		f, _ := parse(tc.args...)
		if err := f.Check(); !errors.As(err, new(lflags.UsageError)) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%v: %v, want a usage error with %q", tc.args, err, tc.want)
		}
	}
	f, fs = parse("--record-secrets")
	if _, err := f.Apply(context.Background(), fs, io.Discard); err == nil || !strings.Contains(err.Error(), "--record-secrets applies to --record") {
		t.Errorf("--record-secrets alone: %v", err)
	}
}
