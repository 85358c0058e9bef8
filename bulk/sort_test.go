package bulk

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"testing"
)

// sortInput is n generated records, every 5th one's key repeated by a
// later record (a different name, so order among equal keys shows), and
// some keys that differ only past their 8th byte or in length.
func sortInput(n int) []Airport {
	var rs []Airport
	for i := range n {
		a := Generated(i)
		switch i % 11 {
		case 3:
			a.IATACode = "LONGKEY-" + a.IATACode // equal first 8 bytes
		case 4:
			a.IATACode = "LONGKEY-"
		}
		rs = append(rs, a)
		if i%5 == 0 && i > 0 {
			d := rs[len(rs)/2]
			d.Name = fmt.Sprintf("again %d", i)
			rs = append(rs, d)
		}
	}
	return rs
}

// Sorted returns every record, in key order (bytes, as SQLite's BINARY
// collation), equal keys in arrival order: from memory, one run on disk
// and many runs, with records straddling the runs' chunks.
func TestSpoolSorted(t *testing.T) {
	for _, tc := range []struct {
		name     string
		n        int
		mem, run int
		disk     bool
	}{
		{"empty", 0, 0, 0, false},
		{"memory", 300, 0, 0, false},
		{"one run", 3000, 4 << 10, 0, true},
		{"many runs", 20000, 4 << 10, 1, true},          // the smallest run: 2*maxSpooled
		{"many runs, odd size", 20000, 1, 50_001, true}, // chunks cut records
		{"tiny merge buffers", 5000, 1, 7_777, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			in := sortInput(tc.n)
			s := NewSpool(SpoolOptions{Dir: t.TempDir(), MemBytes: tc.mem})
			defer s.Close()
			for i := range in {
				if err := s.Add(&in[i]); err != nil {
					t.Fatal(err)
				}
			}
			if s.OnDisk() != tc.disk {
				t.Fatalf("on disk %v", s.OnDisk())
			}
			d, err := s.Sorted(SortOptions{RunBytes: tc.run, MergeBytes: 1})
			if err != nil {
				t.Fatal(err)
			}
			if m, ok := d.(*merger); ok && tc.run != 0 && len(m.runs) < 3 {
				t.Fatalf("%d runs: the test meant many", len(m.runs))
			}
			var got []Airport
			for {
				var a Airport
				if err := d.Next(&a); err == io.EOF {
					break
				} else if err != nil {
					t.Fatal(err)
				}
				got = append(got, a)
			}
			want := slices.Clone(in)
			slices.SortStableFunc(want, func(a, b Airport) int { return strings.Compare(a.IATACode, b.IATACode) })
			if !slices.Equal(got, want) {
				t.Fatalf("%d records back, want %d; first difference at %d", len(got), len(want), firstDiff(got, want))
			}
			if a := Generated(0); s.Add(&a) == nil {
				t.Fatal("Add after Sorted")
			}
		})
	}
}

func firstDiff(a, b []Airport) int {
	for i := range min(len(a), len(b)) {
		if a[i] != b[i] {
			return i
		}
	}
	return min(len(a), len(b))
}

// A spool file that reads back wrong is ErrSpoolCorrupt, not a panic or
// a silent loss.
func TestSpoolSortedRefusesCorrupt(t *testing.T) {
	for name, damage := range map[string]func(f *os.File, size int64){
		"cut":        func(f *os.File, size int64) { f.Truncate(size - 3) },
		"long key":   func(f *os.File, size int64) { f.WriteAt([]byte{MaxKey + 1}, 0) },
		"bad varint": func(f *os.File, size int64) { f.WriteAt(bytes.Repeat([]byte{0xff}, 11), 0) },
	} {
		t.Run(name, func(t *testing.T) {
			s := spoolAll(t, SpoolOptions{Dir: t.TempDir(), MemBytes: 1}, 2000)
			damage(s.f, s.size)
			d, err := s.Sorted(SortOptions{RunBytes: 1})
			for err == nil {
				var a Airport
				err = d.Next(&a)
			}
			if !errors.Is(err, ErrSpoolCorrupt) {
				t.Fatalf("%v, want ErrSpoolCorrupt", err)
			}
		})
	}
}

// FuzzSortRun: parseRun on any bytes indexes only whole records within
// their limits, or says ErrSpoolCorrupt; never a panic; sorting what it
// indexed keeps the same records.
func FuzzSortRun(f *testing.F) {
	var b []byte
	for i := range 5 {
		a := Generated(i)
		b = appendSpooled(b, &a)
	}
	f.Add(b)
	f.Add([]byte{1, 2, 3})
	f.Add(bytes.Repeat([]byte{0xff}, 11))
	f.Fuzz(func(t *testing.T, b []byte) {
		used, es, err := parseRun(b, nil, 0)
		if err != nil && !errors.Is(err, ErrSpoolCorrupt) {
			t.Fatalf("error %v is not ErrSpoolCorrupt", err)
		}
		if used > len(b) {
			t.Fatalf("used %d of %d bytes", used, len(b))
		}
		var want Checksum
		d := NewSpoolReader(bytes.NewReader(b[:used]), len(es))
		want = readAll(t, d)
		sortRun(b, es)
		var out []byte
		for i := range es {
			if i > 0 && bytes.Compare(es[i-1].key(b), es[i].key(b)) > 0 {
				t.Fatalf("entry %d out of order", i)
			}
			out = append(out, b[es[i].rec:int(es[i].rec)+int(es[i].size)]...)
		}
		if got := readAll(t, NewSpoolReader(bytes.NewReader(out), len(es))); got != want {
			t.Fatalf("sorted %v, before %v", got, want)
		}
	})
}

// BenchmarkSpoolSorted is Sorted's cost per record on top of the spool's
// (go test ./bulk -run '^$' -bench SpoolSorted -benchtime 1x).
func BenchmarkSpoolSorted(b *testing.B) {
	const n = 1_000_000
	for range b.N {
		b.StopTimer()
		s := NewSpool(SpoolOptions{Dir: b.TempDir()})
		for i := range n {
			a := Generated(i)
			if err := s.Add(&a); err != nil {
				b.Fatal(err)
			}
		}
		b.StartTimer()
		d, err := s.Sorted(SortOptions{})
		if err != nil {
			b.Fatal(err)
		}
		var a Airport
		for d.Next(&a) == nil {
		}
		s.Close()
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*n), "ns/record")
}
