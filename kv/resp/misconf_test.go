package resp

import (
	"errors"
	"os"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/wirebench/wirebench/kv"
)

type failingFile struct {
	f    *os.File
	fail *atomic.Bool
}

func (ff failingFile) Write(b []byte) (int, error) {
	if ff.fail.Load() {
		return 0, errors.New("injected write failure")
	}
	return ff.f.Write(b)
}
func (ff failingFile) Sync() error            { return ff.f.Sync() }
func (ff failingFile) Truncate(n int64) error { return ff.f.Truncate(n) }
func (ff failingFile) Close() error           { return ff.f.Close() }

// TestRefusedWriteRepliesMISCONF: in a pipeline, only the writes the AOF
// refused turn into errors; reads and later writes answer normally.
func TestRefusedWriteRepliesMISCONF(t *testing.T) {
	var fail atomic.Bool
	addr, st := startOurs(t, kv.Options{Dir: t.TempDir(), Fsync: kv.FsyncAlways, OpenFile: func(p string) (kv.File, error) {
		f, err := os.OpenFile(p, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
		return failingFile{f, &fail}, err
	}})
	c := dial(t, addr)
	if r := c.do(t, "SET", "a", "1"); r != "+OK" {
		t.Fatal(r)
	}
	fail.Store(true)
	c.c.Write(append(append(encodeCmd("GET", "a"), encodeCmd("SET", "a", "2")...), encodeCmd("ECHO", "x")...))
	want := []string{`"1"`, "-MISCONF Errors writing to the AOF file: ", `"x"`}
	for i, w := range want {
		r, err := c.read()
		if err != nil || !strings.HasPrefix(r, w) {
			t.Fatalf("reply %d: %s %v, want prefix %s", i, r, err, w)
		}
	}
	fail.Store(false)
	if r := c.do(t, "GET", "a"); r != `"1"` {
		t.Fatalf("refused SET left %s in memory", r)
	}
	if r := c.do(t, "SET", "a", "3"); r != "+OK" {
		t.Fatalf("after the fault: %s", r)
	}
	_ = st
}
