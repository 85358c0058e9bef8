package load

import (
	"context"
	"testing"

	"github.com/wirebench/wirebench/results"
)

func runRaw(t *testing.T, o Options, ro RawOptions) *results.Load {
	t.Helper()
	if ro.Timeout == 0 { // the CLI sets both from -t
		ro.Timeout = o.Timeout
	}
	sc, err := NewRaw(ro)
	if err != nil {
		t.Fatal(err)
	}
	res, err := Run(context.Background(), o, sc)
	if err != nil {
		t.Fatal(err)
	}
	return res
}
