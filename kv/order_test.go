package kv

import (
	"bytes"
	"errors"
	"fmt"
	"maps"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// recordEdit is a file built from a corpus's records in another order:
// order[k] is the original index of the record at position k.
type recordEdit struct {
	what  string
	order []int
}

// build concatenates the records of data (bounded by ends) in e's order.
func (e recordEdit) build(data []byte, ends []int64) []byte {
	b := bytes.Clone(data[:ends[0]])
	for _, i := range e.order {
		b = append(b, data[ends[i]:ends[i+1]]...)
	}
	return b
}

// expect is what recovery must do with the edited file: a prefix of the
// original order is a shorter log (a cut at a record boundary, which no
// format tells from a log that ended there) and recovers that many
// records; anything else is refused at the first record out of place.
func (e recordEdit) expect(ends []int64) (prefix int, offset int64) {
	off := ends[0]
	for k, i := range e.order {
		if i != k {
			return -1, off
		}
		off += ends[i+1] - ends[i]
	}
	return len(e.order), -1
}

// wholeRecordEdits lists the edits of an n-record file: every record
// dropped, runs of 2 to 4 dropped, every record duplicated right after
// itself and at the end, every pair swapped, and a seeded sample of
// records moved, duplicated elsewhere and overwritten by another.
func wholeRecordEdits(n int, seed uint64) []recordEdit {
	id := func() []int {
		o := make([]int, n)
		for i := range o {
			o[i] = i
		}
		return o
	}
	var out []recordEdit
	for run := 1; run <= 4; run++ {
		for i := 0; i+run <= n; i++ {
			o := slices.Delete(id(), i, i+run)
			out = append(out, recordEdit{fmt.Sprintf("drop %d record(s) from %d", run, i), o})
		}
	}
	for i := range n {
		out = append(out, recordEdit{fmt.Sprintf("duplicate %d after itself", i), slices.Insert(id(), i+1, i)})
		out = append(out, recordEdit{fmt.Sprintf("duplicate %d at the end", i), append(id(), i)})
	}
	for i := range n {
		for j := i + 1; j < n; j++ {
			o := id()
			o[i], o[j] = o[j], o[i]
			out = append(out, recordEdit{fmt.Sprintf("swap %d and %d", i, j), o})
		}
	}
	r := rand.New(rand.NewPCG(seed, 48))
	for range 100 {
		i, p := r.IntN(n), r.IntN(n)
		o := slices.Delete(id(), i, i+1)
		o = slices.Insert(o, p, i)
		out = append(out, recordEdit{fmt.Sprintf("move %d to %d", i, p), o})
		i, p = r.IntN(n), r.IntN(n+1)
		out = append(out, recordEdit{fmt.Sprintf("duplicate %d at %d", i, p), slices.Insert(id(), p, i)})
		i, p = r.IntN(n), r.IntN(n)
		o = id()
		o[p] = i
		out = append(out, recordEdit{fmt.Sprintf("record %d overwrites %d", i, p), o})
	}
	return out
}

// TestFaultCorpusWholeRecords: a record removed, duplicated, swapped,
// moved or overwritten by another — each record's own checksums still
// hold — is refused like a flipped byte, at the offset of the first
// record out of place; only dropping a suffix (a cut at a record
// boundary: a shorter log) starts, with exactly the records left.
func TestFaultCorpusWholeRecords(t *testing.T) {
	const now = 1_800_000_000_000
	data, ends, states := corpusAOF(t, now)
	n := len(ends) - 1
	dir := t.TempDir()
	path := filepath.Join(dir, AOFName)
	var tried, refusedAt, shorter, silentN int
	for _, e := range corpusSample(wholeRecordEdits(n, 1)) {
		d := e.build(data, ends)
		prefix, want := e.expect(ends)
		if err := os.WriteFile(path, d, 0o644); err != nil {
			t.Fatal(err)
		}
		tried++
		s, err := Open(Options{Dir: dir, Fsync: FsyncNo, Now: func() int64 { return now }, RewritePercent: -1})
		if prefix >= 0 {
			if err != nil {
				t.Errorf("%s (a shorter log): %v", e.what, err)
				continue
			}
			got := dump(s)
			s.Close()
			if !maps.Equal(got, states[prefix]) {
				t.Errorf("%s (a shorter log): recovered %v, want %v", e.what, got, states[prefix])
			}
			shorter++
			continue
		}
		if err == nil {
			got := dump(s)
			s.Close()
			silentN++
			same := ""
			if maps.Equal(got, states[n]) {
				same = " (the final state, by chance)"
			}
			t.Errorf("%s: started with %d keys%s, want a refusal at offset %d", e.what, len(got), same, want)
			continue
		}
		var ce *CorruptError
		if !errors.As(err, &ce) || ce.Offset != want || !strings.Contains(err.Error(), fmt.Sprint("offset ", want)) {
			t.Errorf("%s: Open = %v, want a CorruptError at offset %d", e.what, err, want)
			continue
		}
		if after, _ := os.ReadFile(path); !bytes.Equal(after, d) {
			t.Errorf("%s: a refused start changed the file", e.what)
		}
		refusedAt++
	}
	t.Logf("%d records; %d whole-record edits: %d refused at the first record out of place, %d shorter logs recovered, %d started silently",
		n, tried, refusedAt, shorter, silentN)
}

// TestDroppedRecordRefusesThenRepairs is the finding at the size of a
// real log: one record of 2,000 removed mid-file (each record's own
// checksums hold) refused to start naming its offset and the records
// after it; --aof-repair then truncates there as for any damage.
func TestDroppedRecordRefusesThenRepairs(t *testing.T) {
	const n = 2000
	path, ends := writeAOF(t, n) // ends[i]: the end of record i+1
	mid := n / 2
	b, _ := os.ReadFile(path)
	b = slices.Delete(b, int(ends[mid-1]), int(ends[mid])) // record mid+1 (key k<mid>)
	os.WriteFile(path, b, 0o644)
	off := ends[mid-1]

	// The record found there is whole; the ones after it are counted.
	s := refusedThenRepaired(t, path, b, off, mid, n-mid-2, fmt.Sprintf("it is record %d of the file, record %d belongs here", mid+2, mid+1))
	// Appends after the repair continue the numbering of what was kept.
	mustSet(t, s, "after", "repair", 0)
	s.Close()
	s = open(t, Options{Dir: filepath.Dir(path)})
	wantVal(t, s, "after", "repair")
	wantVal(t, s, fmt.Sprint("k", mid-1), fmt.Sprint("value-", mid-1))
}

// TestVersion2FileIsReadAndUpgraded: a file of the previous format (no
// record numbers) replays with its rules, a torn tail included, and is
// rewritten as version 4 before writes; the new file's records are
// numbered, so the same edit is refused afterwards.
func TestVersion2FileIsReadAndUpgraded(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, AOFName)
	b := []byte(aofMagicV2)
	b = frameV2(b, appendSetOp(nil, "a", []byte("1"), 0))
	b = frameV2(b, appendSetOp(appendSetOp(nil, "b", []byte("2"), 0), "c", []byte("3"), 0))
	b = frameV2(b, appendDelOp(nil, "c"))
	b = frameV2(b, appendSetOp(nil, "torn", []byte("x"), 0))
	os.WriteFile(path, b[:len(b)-2], 0o644) // a torn final record
	var logged []string
	s := open(t, Options{Dir: dir, Logf: func(f string, a ...any) { logged = append(logged, fmt.Sprintf(f, a...)) }})
	wantVal(t, s, "a", "1")
	wantVal(t, s, "b", "2")
	wantAbsent(t, s, "c")
	wantAbsent(t, s, "torn")
	if !contains(logged, "format version 2") || !contains(logged, "rewritten in format version 4") {
		t.Fatalf("log %q does not say the version 2 file was read and rewritten", logged)
	}
	mustSet(t, s, "d", "4", 0)
	mustSet(t, s, "d", "5", 0)
	s.Close()
	after, _ := os.ReadFile(path)
	if !strings.HasPrefix(string(after), aofMagic) {
		t.Fatalf("file starts %q after the upgrade, want %q", after[:8], aofMagic)
	}
	s = open(t, Options{Dir: dir})
	wantVal(t, s, "a", "1")
	wantVal(t, s, "d", "5")
	s.Close()

	// The two SETs of d swapped: version 2 would end with d=4.
	rec := frameHead + len(appendSetOp(nil, "d", []byte("5"), 0)) // both records' size
	prev, last := len(after)-2*rec, len(after)-rec
	swapped := slices.Concat(after[:prev], after[last:], after[prev:last])
	os.WriteFile(path, swapped, 0o644)
	var ce *CorruptError
	if _, err := Open(Options{Dir: dir}); !errors.As(err, &ce) || ce.Offset != int64(prev) || !strings.Contains(err.Error(), "out of order") {
		t.Fatalf("Open of the upgraded file with two records swapped = %v, want a CorruptError at %d", err, prev)
	}
}
