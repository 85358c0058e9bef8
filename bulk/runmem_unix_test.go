//go:build unix

package bulk

import (
	"runtime"
	"testing"
)

// TestSortRunOffHeap: Spool.Sorted sorts its runs outside the Go heap
// (runmem.go), so no heap goal is ever set from a run the sort has done
// with. Before, each sort allocated its run (RunBytes) and index on the
// heap, and the upsert after it could fill the heap up to twice that:
// the bulk judge's RssAnon over 20 MiB (docs/bulk.md).
func TestSortRunOffHeap(t *testing.T) {
	const runBytes, n = 1 << 20, 30_000
	s := spoolAll(t, SpoolOptions{Dir: t.TempDir(), MemBytes: 1}, n)
	var want Checksum
	for i := range n {
		a := Generated(i)
		want.Add(&a)
	}
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	d, err := s.Sorted(SortOptions{RunBytes: runBytes})
	runtime.ReadMemStats(&after)
	if err != nil {
		t.Fatal(err)
	}
	if m := d.(*merger); len(m.runs) < 2 {
		t.Fatalf("%d runs: the test meant several", len(m.runs))
	}
	// What is left on the heap: the runs' list and the 64 KiB writer.
	if got := after.TotalAlloc - before.TotalAlloc; got > runBytes/4 {
		t.Errorf("sorting %d bytes in runs of %d allocated %d bytes of Go heap, want at most %d", s.Size(), runBytes, got, runBytes/4)
	}
	if got := readAll(t, d); got != want {
		t.Fatalf("sorted %v, spooled %v", got, want)
	}
}
