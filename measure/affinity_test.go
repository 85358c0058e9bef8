package measure

import (
	"context"
	"runtime"
	"slices"
	"testing"
)

// TestPinAndEnvironment pins the process to the CPUs it already has (so
// the test changes nothing) and checks that every thread reports them and
// that Environment records them.
func TestPinAndEnvironment(t *testing.T) {
	cpus := Affinity()
	if len(cpus) == 0 {
		t.Skip("no affinity information")
	}
	procs := runtime.GOMAXPROCS(0)
	defer runtime.GOMAXPROCS(procs)
	if err := Pin(cpus); err != nil {
		t.Fatal(err)
	}
	if got := Affinity(); !slices.Equal(got, cpus) {
		t.Errorf("affinity after Pin = %v, want %v", got, cpus)
	}
	if runtime.GOMAXPROCS(0) != len(cpus) {
		t.Errorf("GOMAXPROCS = %d, want %d", runtime.GOMAXPROCS(0), len(cpus))
	}
	if err := Pin(nil); err == nil {
		t.Error("Pin(nil) succeeded")
	}
	e := Environment(context.Background())
	if !slices.Equal(e.Affinity, cpus) || e.GoVersion == "" || e.Kernel == "" || e.NumCPU == 0 {
		t.Errorf("environment %+v", e)
	}
}
