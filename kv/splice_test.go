package kv

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"maps"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
)

// aofFile is an AOF's bytes cut into its file header and its records.
type aofFile struct {
	name string
	data []byte
	ends []int64 // ends[0]: the end of the file header; ends[i]: of record i
}

func (f *aofFile) n() int              { return len(f.ends) - 1 }
func (f *aofFile) record(i int) []byte { return f.data[f.ends[i]:f.ends[i+1]] }

// parseAOF cuts a file of the current format into its records by their
// lengths.
func parseAOF(t *testing.T, name string, data []byte) *aofFile {
	t.Helper()
	if !bytes.HasPrefix(data, []byte(aofMagic)) {
		t.Fatalf("%s: starts %q, want %q", name, data[:min(len(data), 8)], aofMagic)
	}
	f := &aofFile{name: name, data: data, ends: []int64{int64(fileHeadLen)}}
	for off := int64(fileHeadLen); off < int64(len(data)); {
		off += frameHead + int64(binary.LittleEndian.Uint32(data[off:]))
		f.ends = append(f.ends, off)
	}
	if f.ends[f.n()] != int64(len(data)) {
		t.Fatalf("%s: records end at %d of %d bytes", name, f.ends[f.n()], len(data))
	}
	return f
}

// recRef is one record of a file.
type recRef struct {
	f *aofFile
	i int // 0-based
}

// splice is a file built of host's header and records taken from any
// file.
type splice struct {
	what        string
	host, donor *aofFile
	recs        []recRef
}

func (sp splice) bytes() []byte {
	b := bytes.Clone(sp.host.data[:sp.host.ends[0]])
	for _, r := range sp.recs {
		b = append(b, r.f.record(r.i)...)
	}
	return b
}

// expect: a file whose records are, from its start, those of the host
// — or of the donor when it has the same header (a copy of the host from
// before a fork: the same ID) — is a shorter log (or a whole copy) of
// that file, and starts with them; otherwise recovery must refuse at the
// first record that fits neither.
func (sp splice) expect() (like *aofFile, prefix int, offset int64) {
	var best *aofFile
	bestN := -1
	for _, f := range []*aofFile{sp.host, sp.donor} {
		if f == nil || !bytes.Equal(f.data[:f.ends[0]], sp.host.data[:sp.host.ends[0]]) {
			continue
		}
		k := 0
		for k < len(sp.recs) && k < f.n() && bytes.Equal(sp.recs[k].f.record(sp.recs[k].i), f.record(k)) {
			k++
		}
		if k > bestN {
			best, bestN = f, k
		}
	}
	if bestN == len(sp.recs) {
		return best, bestN, -1
	}
	off := sp.host.ends[0]
	for _, r := range sp.recs[:bestN] {
		off += int64(len(r.f.record(r.i)))
	}
	return nil, -1, off
}

// foreignRun says whether the records at off and after it are two of a
// file with another header (another ID).
func (sp splice) foreignRun(off int64) bool {
	at := sp.host.ends[0]
	for k, r := range sp.recs {
		if at == off {
			return k+1 < len(sp.recs) && r.f == sp.recs[k+1].f && r.i+1 == sp.recs[k+1].i &&
				!bytes.Equal(r.f.data[:r.f.ends[0]], sp.host.data[:sp.host.ends[0]])
		}
		at += int64(len(r.f.record(r.i)))
	}
	return false
}

// splices lists the ways records of donor can be put into host: each of
// donor's records in place of host's at the same position, in place of
// host's next one, inserted there; runs of three in place of host's; host's records up to each point
// followed by donor's from the same point (a tail copied over); donor's
// records after host's header; and host followed by donor's extra
// records.
func splices(host, donor *aofFile) []splice {
	own := func(from, to int) []recRef {
		var r []recRef
		for i := from; i < to; i++ {
			r = append(r, recRef{host, i})
		}
		return r
	}
	other := func(from, to int) []recRef {
		var r []recRef
		for i := from; i < to; i++ {
			r = append(r, recRef{donor, i})
		}
		return r
	}
	tag := fmt.Sprintf("%s <- %s", host.name, donor.name)
	var out []splice
	n, m := host.n(), donor.n()
	for i := range min(n, m) {
		out = append(out, splice{what: fmt.Sprintf("%s: record %d replaced by the other's record %d", tag, i, i),
			host: host, donor: donor, recs: append(append(own(0, i), recRef{donor, i}), own(i+1, n)...)})
		out = append(out, splice{what: fmt.Sprintf("%s: tail from record %d copied over", tag, i),
			host: host, donor: donor, recs: append(own(0, i), other(i, m)...)})
		if i+1 < m {
			out = append(out, splice{what: fmt.Sprintf("%s: record %d replaced by the other's record %d", tag, i, i+1),
				host: host, donor: donor, recs: append(append(own(0, i), recRef{donor, i + 1}), own(i+1, n)...)})
		}
		if i+3 <= min(n, m) {
			out = append(out, splice{what: fmt.Sprintf("%s: records %d to %d replaced by the other's", tag, i, i+2),
				host: host, donor: donor, recs: append(append(own(0, i), other(i, i+3)...), own(i+3, n)...)})
		}
		out = append(out, splice{what: fmt.Sprintf("%s: the other's record %d inserted at %d", tag, i, i),
			host: host, donor: donor, recs: append(append(own(0, i), recRef{donor, i}), own(i, n)...)})
	}
	out = append(out, splice{what: tag + ": all the other's records under this header", host: host, donor: donor, recs: other(0, m)})
	if m > n {
		out = append(out, splice{what: tag + ": the other's later records appended", host: host, donor: donor, recs: append(own(0, n), other(n, m)...)})
	}
	return out
}

// spliceHistory writes one record per step through a store in dir: SETs,
// INCRs, APPENDs, a DEL and an MSET of the same keys, with values that
// depend on variant, so two variants are different histories of the same
// keys and two runs of one variant the same history.
func spliceHistory(t *testing.T, s *Store, variant string, rounds int) {
	t.Helper()
	step := func(what string, tk Ticket, err error) {
		t.Helper()
		if err == nil {
			err = s.Wait(tk)
		}
		if err != nil {
			t.Fatalf("%s: %v", what, err)
		}
	}
	for r := range rounds {
		_, tk, err := s.Set(fmt.Sprint("k", r%3), []byte(fmt.Sprint(variant, "-", r)), SetOpts{})
		step("set", tk, err)
		_, tk, err = s.IncrBy("ctr", int64(len(variant)))
		step("incr", tk, err)
		_, tk, err = s.Append("log", []byte(fmt.Sprint(variant, r, ";")))
		step("append", tk, err)
		if r%4 == 3 {
			_, tk, err = s.Del(fmt.Sprint("k", (r+1)%3))
			step("del", tk, err)
			tk, err = s.MSet([]Item{{Key: "m", Val: []byte(variant)}, {Key: fmt.Sprint("k", r%3), Val: []byte("mset")}})
			step("mset", tk, err)
		}
	}
}

// writeHistory writes a whole file of one history and returns it.
func writeHistory(t *testing.T, name, variant string, rounds int) *aofFile {
	t.Helper()
	dir := t.TempDir()
	s := open(t, Options{Dir: dir, Fsync: FsyncNo, RewritePercent: -1})
	spliceHistory(t, s, variant, rounds)
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(dir, AOFName))
	if err != nil {
		t.Fatal(err)
	}
	return parseAOF(t, name, b)
}

// spliceSources returns pairs of files to splice between: two servers
// with the same history, two with different histories of the same keys,
// one file before and after a rewrite (BGREWRITEAOF), and a file and its
// copy from before --aof-repair cut it, whose histories fork where it
// was cut.
func spliceSources(t *testing.T) [][2]*aofFile {
	same1 := writeHistory(t, "server A", "a", 12)
	same2 := writeHistory(t, "server B (same history)", "a", 12)
	other := writeHistory(t, "server C (other history)", "c", 12)

	// A rewrite: the file before it, and after it with more writes.
	dir := t.TempDir()
	path := filepath.Join(dir, AOFName)
	s := open(t, Options{Dir: dir, Fsync: FsyncNo, RewritePercent: -1})
	spliceHistory(t, s, "r", 8)
	before, _ := os.ReadFile(path)
	done, err := s.Rewrite()
	if err != nil {
		t.Fatal(err)
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	spliceHistory(t, s, "s", 8)
	s.Close()
	after, _ := os.ReadFile(path)

	// --aof-repair: a copy kept before the repair (as docs/kv-durability.md
	// advises) and the repaired file with new writes after the cut.
	dir = t.TempDir()
	path = filepath.Join(dir, AOFName)
	s = open(t, Options{Dir: dir, Fsync: FsyncNo, RewritePercent: -1})
	spliceHistory(t, s, "p", 10)
	s.Close()
	old, _ := os.ReadFile(path)
	of := parseAOF(t, "a copy from before a repair", old)
	bad := bytes.Clone(old)
	bad[of.ends[10]+frameHead] ^= 0xff // record 11's first payload byte
	os.WriteFile(path, bad, 0o644)
	s = open(t, Options{Dir: dir, Fsync: FsyncNo, RewritePercent: -1, Repair: true})
	spliceHistory(t, s, "q", 10)
	s.Close()
	repaired, _ := os.ReadFile(path)

	rb, ra := parseAOF(t, "before a rewrite", before), parseAOF(t, "after the rewrite", after)
	rp := parseAOF(t, "repaired and written on", repaired)
	return [][2]*aofFile{{same1, same2}, {same2, same1}, {same1, other}, {other, same1},
		{ra, rb}, {rb, ra}, {rp, of}, {of, rp}}
}

// TestFaultCorpusSplices: records copied between AOF files — two servers
// with the same history or with different histories of the same keys, a
// file before and after a rewrite, a file and its copy from before a
// repair — one record, a tail or every record at a time, each record's
// own checksums holding, are refused at the offset of the first record
// that is not the file's own record for that place. A splice that leaves
// a file's own records in place (a shorter log, or a whole copy from
// before a fork, which shares the ID) starts with them.
func TestFaultCorpusSplices(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, AOFName)
	var tried, refusedAt, shorter, silentN int
	silentBy := map[string]int{}
	for _, pair := range spliceSources(t) {
		for _, sp := range corpusSample(splices(pair[0], pair[1])) {
			d := sp.bytes()
			like, prefix, want := sp.expect()
			tried++
			if prefix >= 0 {
				// A file's own records: compare with that file cut there.
				wantState := openState(t, dir, like.data[:like.ends[prefix]])
				if got := openState(t, dir, d); !maps.Equal(got, wantState) {
					t.Errorf("%s (a shorter log of %s): recovered %v, want %v", sp.what, like.name, got, wantState)
				}
				shorter++
				continue
			}
			if err := os.WriteFile(path, d, 0o644); err != nil {
				t.Fatal(err)
			}
			s, err := Open(Options{Dir: dir, Fsync: FsyncNo, RewritePercent: -1})
			if err == nil {
				got := dump(s)
				s.Close()
				silentN++
				silentBy[sp.what[:strings.Index(sp.what, ":")]]++
				t.Errorf("%s: started with %d keys, want a refusal at offset %d", sp.what, len(got), want)
				continue
			}
			var ce *CorruptError
			if !errors.As(err, &ce) || ce.Offset != want || !strings.Contains(err.Error(), fmt.Sprint("offset ", want)) {
				t.Errorf("%s: Open = %v, want a CorruptError at offset %d", sp.what, err, want)
				continue
			}
			if after, _ := os.ReadFile(path); !bytes.Equal(after, d) {
				t.Errorf("%s: a refused start changed the file", sp.what)
			}
			if sp.foreignRun(want) && !strings.Contains(err.Error(), "a record of another AOF file (") {
				t.Errorf("%s: refusal %q does not name another file's records", sp.what, err)
			}
			refusedAt++
		}
	}
	t.Logf("%d splices: %d refused at the first record not the file's own, %d a file's own records (recovered as such), %d started silently %v",
		tried, refusedAt, shorter, silentN, silentBy)
}

// openState opens data as the AOF in dir and returns what it holds.
func openState(t *testing.T, dir string, data []byte) state {
	t.Helper()
	if err := os.WriteFile(filepath.Join(dir, AOFName), data, 0o644); err != nil {
		t.Fatal(err)
	}
	s, err := Open(Options{Dir: dir, Fsync: FsyncNo, RewritePercent: -1})
	if err != nil {
		t.Fatalf("open: %v", err)
	}
	defer s.Close()
	return dump(s)
}

// TestSplicedTailRefusesThenRepairs: another server's records of the
// same history (the same SETs) copied over a file's tail, each record's
// own checksums holding, are refused naming the first one as another
// file's and counting none of them as this file's intact records;
// --aof-repair truncates there, keeping the file's own records, and
// appends after it continue the file's chain.
func TestSplicedTailRefusesThenRepairs(t *testing.T) {
	const n, k = 50, 20
	pa, ea := writeAOF(t, n) // ea[i]: the end of record i+1
	pb, eb := writeAOF(t, n)
	a, _ := os.ReadFile(pa)
	b, _ := os.ReadFile(pb)
	if len(a) != len(b) || bytes.Equal(a, b) || !slices.Equal(ea, eb) {
		t.Fatal("the two files of one history differ in size or agree in every byte")
	}
	d := slices.Concat(a[:ea[k-1]], b[eb[k-1]:])
	os.WriteFile(pa, d, 0o644)
	s := refusedThenRepaired(t, pa, d, ea[k-1], k, 0,
		fmt.Sprintf("a record of another AOF file (%d records in a row from here check with one other file's ID", n-k))
	mustSet(t, s, "after", "repair", 0)
	s.Close()
	s = open(t, Options{Dir: filepath.Dir(pa)})
	wantVal(t, s, "after", "repair")
	wantVal(t, s, fmt.Sprint("k", k-1), fmt.Sprint("value-", k-1))
	wantAbsent(t, s, fmt.Sprint("k", k))
	s.Close()
}

// TestDamagedFileHeader: a flipped byte of the file ID refuses at offset
// 0 (no record can be checked without it); --aof-repair starts an empty
// file with a new ID.
func TestDamagedFileHeader(t *testing.T) {
	path, _ := writeAOF(t, 5)
	b, _ := os.ReadFile(path)
	b[len(aofMagic)+3] ^= 0x10
	os.WriteFile(path, b, 0o644)
	_, err := Open(Options{Dir: filepath.Dir(path)})
	var ce *CorruptError
	if !errors.As(err, &ce) || ce.Offset != 0 || !strings.Contains(err.Error(), "file header checksum mismatch") {
		t.Fatalf("Open = %v, want a CorruptError at offset 0 for the file header", err)
	}
	if after, _ := os.ReadFile(path); !bytes.Equal(after, b) {
		t.Fatal("a refused start changed the file")
	}
	var logged []string
	s := open(t, Options{Dir: filepath.Dir(path), Repair: true, Logf: func(f string, a ...any) { logged = append(logged, fmt.Sprintf(f, a...)) }})
	if s.Len() != 0 || !contains(logged, "truncated at offset 0") {
		t.Fatalf("repair kept %d keys, logged %q", s.Len(), logged)
	}
	mustSet(t, s, "new", "file", 0)
	s.Close()
	after, _ := os.ReadFile(path)
	if bytes.Equal(after[:fileHeadLen], b[:fileHeadLen]) {
		t.Fatal("the repaired file kept the damaged header")
	}
	s = open(t, Options{Dir: filepath.Dir(path)})
	wantVal(t, s, "new", "file")
	s.Close()
}

// TestVersion3FileIsReadAndUpgraded: a file of the previous format
// (numbered records, no file ID, no chain) replays with its rules — a
// torn tail cut, a record out of order refused — and is rewritten as
// version 4 before writes.
func TestVersion3FileIsReadAndUpgraded(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, AOFName)
	v3 := func(payloads ...[]byte) ([]byte, []int) {
		b := []byte(aofMagicV3)
		c := chain{unlinked: true}
		var ends []int
		for _, p := range payloads {
			var start int
			b, start = beginFrame(b)
			b = endFrame(append(b, p...), start, &c)
			ends = append(ends, len(b))
		}
		return b, ends
	}
	b, ends := v3(appendSetOp(nil, "a", []byte("1"), 0), appendSetOp(nil, "b", []byte("2"), 0), appendDelOp(nil, "b"), appendSetOp(nil, "torn", []byte("x"), 0))
	// The format's own fields: header crc of bytes 0..12 unseeded,
	// payload crc of the payload alone.
	if h := b[len(aofMagicV3):]; binary.LittleEndian.Uint32(h[12:]) != crc32.Checksum(h[:12], castagnoli) ||
		binary.LittleEndian.Uint32(h[8:]) != crc32.Checksum(h[frameHead:ends[0]-len(aofMagicV3)], castagnoli) || binary.LittleEndian.Uint32(h[4:]) != 1 {
		t.Fatal("the version 3 frames built here are not version 3's")
	}
	os.WriteFile(path, b[:len(b)-2], 0o644)
	var logged []string
	s := open(t, Options{Dir: dir, Logf: func(f string, a ...any) { logged = append(logged, fmt.Sprintf(f, a...)) }})
	wantVal(t, s, "a", "1")
	wantAbsent(t, s, "b")
	wantAbsent(t, s, "torn")
	if !contains(logged, "format version 3") || !contains(logged, "rewritten in format version 4") {
		t.Fatalf("log %q does not say the version 3 file was read and rewritten", logged)
	}
	mustSet(t, s, "c", "3", 0)
	s.Close()
	after, _ := os.ReadFile(path)
	if !strings.HasPrefix(string(after), aofMagic) {
		t.Fatalf("file starts %q after the upgrade, want %q", after[:8], aofMagic)
	}
	s = open(t, Options{Dir: dir})
	wantVal(t, s, "a", "1")
	wantVal(t, s, "c", "3")
	s.Close()

	// Records 2 and 3 swapped: refused by their numbers.
	swapped := slices.Concat(b[:ends[0]], b[ends[1]:ends[2]], b[ends[0]:ends[1]], b[ends[2]:ends[3]])
	os.WriteFile(path, swapped, 0o644)
	var ce *CorruptError
	if _, err := Open(Options{Dir: dir}); !errors.As(err, &ce) || ce.Offset != int64(ends[0]) || !strings.Contains(err.Error(), "out of order") {
		t.Fatalf("Open of a version 3 file with two records swapped = %v, want a CorruptError at %d", err, ends[0])
	}
}

// TestResealMakesFramesTheNextRecords: frames sealed for one file (and
// frames with only their length set, as a rewrite's tail gets them)
// resealed for another read back as that file's records, in its chain
// after the records it already has, and not as the first file's.
func TestResealMakesFramesTheNextRecords(t *testing.T) {
	_, old := newFile()
	head, ch := newFile()
	var b []byte
	for i := range 3 { // the new file's own first records
		var s int
		b, s = beginFrame(b)
		b = endFrame(appendSetOp(b, fmt.Sprint("own", i), []byte("v"), 0), s, &ch)
	}
	own := len(b)
	for i := range 5 {
		var s int
		b, s = beginFrame(b)
		b = appendSetOp(b, fmt.Sprint("tail", i), []byte("w"), 0)
		if i%2 == 0 {
			b = endFrame(b, s, &old) // framed for the old file
		} else {
			binary.LittleEndian.PutUint32(b[s:], uint32(len(b)-s-frameHead))
		}
	}
	ch.reseal(b[own:])
	file := append(head, b...)
	c, ok := parseFileHead(file)
	if !ok {
		t.Fatal("file header does not check")
	}
	n := 0
	off, err := readRecords(bytes.NewReader(file), aofVersion, int64(fileHeadLen), int64(len(file)), &c, func([]Op) error { n++; return nil })
	if err != nil || off != int64(len(file)) || n != 8 || c != ch {
		t.Fatalf("read %d records to %d of %d: %v; chain %+v, the writer's %+v", n, off, len(file), err, c, ch)
	}
}

// TestRewriteResealsALargeTail: writers log megabytes of SETs while a
// rewrite snapshots 20,000 keys, so the tail is resealed in chunks
// outside the lock as well as under it; the file then replays to the
// store's state.
func TestRewriteResealsALargeTail(t *testing.T) {
	dir := t.TempDir()
	s := open(t, Options{Dir: dir, Fsync: FsyncNo, RewritePercent: -1})
	val := bytes.Repeat([]byte("x"), 1024)
	for i := range 20000 {
		if _, _, err := s.Set(fmt.Sprint("k", i), val, SetOpts{}); err != nil {
			t.Fatal(err)
		}
	}
	var stop atomic.Bool
	var wg sync.WaitGroup
	var logged atomic.Int64
	for w := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			big := bytes.Repeat([]byte{byte('a' + w)}, 2048)
			for i := 0; !stop.Load(); i++ {
				mustSet(t, s, fmt.Sprint("w", w, "-", i%300), string(big[:1024+i%1024]), 0)
				logged.Add(1)
			}
		}()
	}
	for logged.Load() < 100 {
		runtime.Gosched()
	}
	from := logged.Load()
	done, err := s.Rewrite()
	if err != nil {
		t.Fatal(err)
	}
	if err := <-done; err != nil {
		t.Fatalf("rewrite: %v", err)
	}
	during := logged.Load() - from
	for range 50 { // appended after the switch: the new file's chain
		mustSet(t, s, "after", "switch", 0)
	}
	stop.Store(true)
	wg.Wait()
	t.Logf("%d SETs of 1-2 KiB logged during the rewrite", during)
	want := snapshot(s)
	s.Close()
	s2 := open(t, Options{Dir: dir})
	defer s2.Close()
	if got := snapshot(s2); !maps.Equal(got, want) {
		t.Fatalf("%d keys after restart, want %d (or other values)", len(got), len(want))
	}
}
