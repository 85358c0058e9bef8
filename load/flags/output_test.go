package flags

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/spf13/pflag"

	"github.com/wirebench/wirebench/results"
)

// TestOutput: --out dir/ becomes the segment's file inside it; an
// existing file is refused without --force; thresholds and percentiles
// are read, and a bad one is a usage error naming its flag.
func TestOutput(t *testing.T) {
	dir := t.TempDir()
	parse := func(args ...string) *Output {
		var o Output
		var force bool
		fs := pflag.NewFlagSet("load", pflag.ContinueOnError)
		o.RegisterOutput(fs, &force, "")
		if err := fs.Parse(args); err != nil {
			t.Fatal(err)
		}
		return &o
	}
	o := parse("--out", dir+"/segs/", "--threshold", "p99<50ms", "--latency")
	if err := o.Prepare(results.Segment{I: 2, N: 3}); err != nil {
		t.Fatal(err)
	}
	if want := filepath.Join(dir, "segs", "segment-2-of-3.json"); o.Out != want {
		t.Errorf("--out %s, want %s", o.Out, want)
	}
	if ths, pcts, err := o.Read(); err != nil || len(ths) != 1 || len(pcts) != len(results.WrkPercentiles) {
		t.Errorf("read: %v, %v, %v", ths, pcts, err)
	}
	existing := filepath.Join(dir, "r.json")
	if err := os.WriteFile(existing, []byte("{}"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := parse("--out", existing).Prepare(results.Segment{}); err == nil {
		t.Error("an existing --out file was not refused")
	}
	if err := parse("--force", "--out", existing).Prepare(results.Segment{}); err != nil {
		t.Errorf("--force: %v", err)
	}
	if _, _, err := parse("--percentiles", "x").Read(); !errors.As(err, new(UsageError)) || !strings.Contains(err.Error(), "--percentiles") {
		t.Errorf("--percentiles x: %v", err)
	}
}
