package kv

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestLengthFlipMidFileRefuses is issue 34's reproduction: flip the high
// byte of a mid-file record's length (d[off+3] ^= 1, +16 MiB: past the
// end of the file) and restart. The old reader took it for a torn tail
// and cut half the log silently; now the start is refused with the
// offset and what follows, and --aof-repair says what it dropped.
func TestLengthFlipMidFileRefuses(t *testing.T) {
	const n = 2000
	path, ends := writeAOF(t, n)
	mid := n / 2
	off := ends[mid-1] // record mid starts here
	b, _ := os.ReadFile(path)
	b[off+3] ^= 1
	os.WriteFile(path, b, 0o644)

	s := refusedThenRepaired(t, path, b, off, mid, n-mid-1, fmt.Sprint(n-mid-1, " intact records"))
	s.Close()
}

// TestFinalRecordPayloadFlipRefuses: a complete final record whose
// checksum fails is damage, not a cut write (a cut leaves a prefix).
func TestFinalRecordPayloadFlipRefuses(t *testing.T) {
	path, ends := writeAOF(t, 10)
	b, _ := os.ReadFile(path)
	b[len(b)-1] ^= 0x80
	os.WriteFile(path, b, 0o644)
	_, err := Open(Options{Dir: filepath.Dir(path)})
	var ce *CorruptError
	if !errors.As(err, &ce) || ce.Offset != ends[8] || ce.Intact != 0 {
		t.Fatalf("Open = %v, want a CorruptError at %d with nothing intact after", err, ends[8])
	}
}

// TestVersion1FileIsReadAndUpgraded: a file of the old format replays
// (with the old rules) and is rewritten as version 2 before writes.
func TestVersion1FileIsReadAndUpgraded(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, AOFName)
	b := []byte(aofMagicV1)
	b = frameV1(b, appendSetOp(nil, "a", []byte("1"), 0))
	b = frameV1(b, appendSetOp(appendSetOp(nil, "b", []byte("2"), 0), "c", []byte("3"), 0))
	b = frameV1(b, appendDelOp(nil, "c"))
	full := len(b)
	b = frameV1(b, appendSetOp(nil, "torn", []byte("x"), 0))
	os.WriteFile(path, b[:len(b)-2], 0o644) // a torn final record
	s := open(t, Options{Dir: dir})
	wantVal(t, s, "a", "1")
	wantVal(t, s, "b", "2")
	wantAbsent(t, s, "c")
	wantAbsent(t, s, "torn")
	mustSet(t, s, "d", "4", 0)
	s.Close()
	after, _ := os.ReadFile(path)
	if !strings.HasPrefix(string(after), aofMagic) {
		t.Fatalf("file starts %q after the upgrade, want %q", after[:8], aofMagic)
	}
	s = open(t, Options{Dir: dir})
	wantVal(t, s, "a", "1")
	wantVal(t, s, "d", "4")

	// The old rules: a complete final record with a bad CRC now refuses.
	b = b[:full]
	b[len(b)-1] ^= 1
	d2 := t.TempDir()
	os.WriteFile(filepath.Join(d2, AOFName), b, 0o644)
	var ce *CorruptError
	if _, err := Open(Options{Dir: d2}); !errors.As(err, &ce) || ce.Exact {
		t.Fatalf("Open = %v, want a CorruptError with an inexact count", err)
	}
}

// refusedThenRepaired checks a damaged AOF at path (whose bytes are b,
// with the damage at off and the keys of the records before it kept):
// the start is refused with a CorruptError at off, exact, counting the
// intact records after it and saying what extra says; the refusal leaves
// the file as it was; --aof-repair then keeps those keys and logs what it
// dropped. It returns the repaired store.
func refusedThenRepaired(t *testing.T, path string, b []byte, off int64, kept, intact int, extra string) *Store {
	t.Helper()
	s, err := Open(Options{Dir: filepath.Dir(path)})
	if err == nil {
		n := s.Len()
		s.Close()
		t.Fatalf("started with %d keys after damage at offset %d: a silent loss", n, off)
	}
	var ce *CorruptError
	if !errors.As(err, &ce) || ce.Offset != off {
		t.Fatalf("Open = %v, want a CorruptError at %d", err, off)
	}
	if ce.Intact != intact || !ce.Exact || ce.Bytes != int64(len(b))-off {
		t.Fatalf("%d intact records (exact %v) and %d bytes after it, want %d and %d", ce.Intact, ce.Exact, ce.Bytes, intact, int64(len(b))-off)
	}
	for _, w := range []string{fmt.Sprint("offset ", off), extra, "--aof-repair"} {
		if !strings.Contains(err.Error(), w) {
			t.Errorf("error %q does not say %q", err, w)
		}
	}
	if after, _ := os.ReadFile(path); !bytes.Equal(after, b) {
		t.Fatal("a refused start must not modify the file")
	}
	var logged []string
	s = open(t, Options{Dir: filepath.Dir(path), Repair: true, Logf: func(f string, a ...any) { logged = append(logged, fmt.Sprintf(f, a...)) }})
	if s.Len() != kept {
		t.Fatalf("repair kept %d keys, want the %d before the bad record", s.Len(), kept)
	}
	want := fmt.Sprintf("truncated at offset %d, dropping %d bytes: the bad record and the %d intact records after it; kept %d records", off, int64(len(b))-off, intact, kept)
	if !contains(logged, want) {
		t.Fatalf("repair log %q lacks %q", logged, want)
	}
	return s
}
