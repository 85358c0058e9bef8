//go:build unix

package bulk

import (
	"unsafe"

	"golang.org/x/sys/unix"
)

// newRunMem maps the run and its index as one private anonymous mapping
// (see runmem.go): pages are resident only once touched, so the index's
// room for the shortest records costs address space, not memory. sortEntry
// holds no pointers, so the GC has nothing to find in it. If the mapping
// fails (an address-space limit), the run goes on the heap as before.
func newRunMem(runBytes int) *runMem {
	size, esOff, esCap := runMemSize(runBytes)
	mem, err := unix.Mmap(-1, 0, size, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_PRIVATE|unix.MAP_ANON)
	if err != nil {
		return heapRunMem(runBytes)
	}
	es := unsafe.Slice((*sortEntry)(unsafe.Pointer(&mem[esOff])), esCap)
	return &runMem{buf: mem[:runBytes:runBytes], es: es[:0], free: func() { unix.Munmap(mem) }}
}
