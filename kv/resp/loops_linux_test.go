//go:build linux

package resp

import (
	"runtime"
	"testing"

	"github.com/wirebench/wirebench/kv"
)

// More Ps than CPUs (serve gives a server on one CPU two) still makes
// one event loop per CPU: two loops on one CPU split the connections and
// the AOF's batches between them.
func TestLoopsNoMoreThanCPUs(t *testing.T) {
	cpus := runtime.NumCPU()
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(cpus + 1))
	st, err := kv.Open(kv.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	srv, err := Listen("127.0.0.1:0", st, Options{Engine: EngineLoop})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	if n := len(srv.loops); n != cpus {
		t.Fatalf("%d event loops with %d Ps on %d CPUs, want %d", n, cpus+1, cpus, cpus)
	}
}
