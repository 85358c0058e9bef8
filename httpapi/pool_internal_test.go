package httpapi

import (
	"bytes"
	"testing"
)

// TestBufferPoolDropsHugeBuffers: a buffer of up to 1 MiB goes back to the
// pool; a larger one (a huge request's) does not, so it cannot pin memory.
// sync.Pool may drop anything, so "kept" is tried a few times while
// "dropped" must hold on every try.
func TestBufferPoolDropsHugeBuffers(t *testing.T) {
	kept := false
	for range 10 {
		b := bytes.NewBuffer(make([]byte, 0, 1<<20))
		putBuffer(b)
		if getBuffer() == b {
			kept = true
			break
		}
	}
	if !kept {
		t.Error("a 1 MiB buffer never came back from the pool")
	}
	for range 10 {
		b := bytes.NewBuffer(make([]byte, 0, 1<<20+1))
		putBuffer(b)
		if getBuffer() == b {
			t.Fatal("a buffer over 1 MiB was pooled")
		}
	}
	b := getBuffer()
	b.WriteString("left over")
	putBuffer(b)
	if got := getBuffer(); got.Len() != 0 {
		t.Errorf("a pooled buffer came back holding %q", got.String())
	}
}
