package kv

import (
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

	s, err := Open(Options{Dir: filepath.Dir(path)})
	if err == nil {
		kept := s.Len()
		s.Close()
		t.Fatalf("started with %d of %d records after a length flip at offset %d: a silent loss", kept, n, off)
	}
	var ce *CorruptError
	if !errors.As(err, &ce) || ce.Offset != off {
		t.Fatalf("Open = %v, want a CorruptError at %d", err, off)
	}
	if want := n - mid - 1; ce.Intact != want || !ce.Exact || ce.Bytes != int64(len(b))-off {
		t.Fatalf("%d intact records (exact %v) and %d bytes after it, want %d and %d", ce.Intact, ce.Exact, ce.Bytes, want, int64(len(b))-off)
	}
	for _, w := range []string{fmt.Sprint("offset ", off), fmt.Sprint(n-mid-1, " intact records"), "--aof-repair"} {
		if !strings.Contains(err.Error(), w) {
			t.Errorf("error %q does not say %q", err, w)
		}
	}
	if after, _ := os.ReadFile(path); len(after) != len(b) {
		t.Fatal("a refused start must not modify the file")
	}

	var logged []string
	s = open(t, Options{Dir: filepath.Dir(path), Repair: true, Logf: func(f string, a ...any) { logged = append(logged, fmt.Sprintf(f, a...)) }})
	if s.Len() != mid {
		t.Fatalf("repair kept %d keys, want the %d before the bad record", s.Len(), mid)
	}
	want := fmt.Sprintf("truncated at offset %d, dropping %d bytes: the bad record and the %d intact records after it; kept %d records", off, int64(len(b))-off, n-mid-1, mid)
	if !contains(logged, want) {
		t.Fatalf("repair log %q lacks %q", logged, want)
	}
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
