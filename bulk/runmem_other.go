//go:build !unix

package bulk

// newRunMem: without mmap, the run goes on the Go heap (see runmem.go).
func newRunMem(runBytes int) *runMem { return heapRunMem(runBytes) }
