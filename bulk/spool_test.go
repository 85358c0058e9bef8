package bulk

import (
	"bytes"
	"errors"
	"io"
	"strings"
	"testing"
)

func spoolAll(t *testing.T, o SpoolOptions, n int) *Spool {
	t.Helper()
	s := NewSpool(o)
	t.Cleanup(func() { s.Close() })
	for i := range n {
		a := Generated(i)
		if err := s.Add(&a); err != nil {
			t.Fatal(err)
		}
	}
	return s
}

func readAll(t *testing.T, d Decoder) (c Checksum) {
	t.Helper()
	for {
		var a Airport
		if err := d.Next(&a); err == io.EOF {
			return c
		} else if err != nil {
			t.Fatal(err)
		}
		c.Add(&a)
	}
}

// Records read back exactly as added, in order, from memory and from the
// file alike; the file is used only past MemBytes.
func TestSpoolRoundTrip(t *testing.T) {
	for _, tc := range []struct {
		n, mem int
		disk   bool
	}{{0, 0, false}, {10, 0, false}, {5000, 4 << 10, true}, {5000, 1, true}} {
		s := spoolAll(t, SpoolOptions{Dir: t.TempDir(), MemBytes: tc.mem}, tc.n)
		if s.OnDisk() != tc.disk || s.Len() != tc.n {
			t.Fatalf("%+v: on disk %v, %d records", tc, s.OnDisk(), s.Len())
		}
		d, err := s.Records()
		if err != nil {
			t.Fatal(err)
		}
		if got := readAll(t, d); got != GeneratedChecksum(tc.n) {
			t.Fatalf("%+v: read back %v", tc, got)
		}
		a := Generated(0)
		if s.Add(&a) == nil {
			t.Fatalf("%+v: Add after Records", tc)
		}
	}
}

// MaxBytes: the record that would pass it is refused with ErrSpoolFull,
// and what was spooled before stays.
func TestSpoolFull(t *testing.T) {
	a := Airport{IATACode: "AAA", Name: strings.Repeat("n", 100), City: "c", Country: "d"}
	one := int64(len(appendSpooled(nil, &a)))
	s := NewSpool(SpoolOptions{MaxBytes: 3 * one})
	defer s.Close()
	for i := range 4 {
		err := s.Add(&a)
		if (i < 3) != (err == nil) || (err != nil && !errors.Is(err, ErrSpoolFull)) {
			t.Fatalf("record %d: %v", i, err)
		}
	}
	if s.Len() != 3 || s.Size() != 3*one {
		t.Fatalf("%d records, %d bytes", s.Len(), s.Size())
	}
}

// The reader refuses what the writer cannot have written.
func TestSpoolReaderRefusesCorrupt(t *testing.T) {
	a := Generated(1)
	good := appendSpooled(nil, &a)
	for name, tc := range map[string]struct {
		b []byte
		n int
	}{
		"cut":          {good[:len(good)-1], 1},
		"extra":        {append(append([]byte{}, good...), 0), 1},
		"missing":      {good, 2},
		"long key":     {append([]byte{MaxKey + 1, 0, 0, 0}, make([]byte, MaxKey+1)...), 1},
		"overlong len": {bytes.Repeat([]byte{0xff}, 11), 1},
	} {
		d := NewSpoolReader(bytes.NewReader(tc.b), tc.n)
		var err error
		for err == nil {
			var x Airport
			err = d.Next(&x)
		}
		if !errors.Is(err, ErrSpoolCorrupt) {
			t.Errorf("%s: %v", name, err)
		}
	}
}

// FuzzSpoolReader: any bytes and count end in records, io.EOF or
// ErrSpoolCorrupt, never a panic, and fields within their limits.
func FuzzSpoolReader(f *testing.F) {
	a := Generated(7)
	f.Add(appendSpooled(nil, &a), 1)
	f.Add([]byte{1, 2, 3}, 2)
	f.Fuzz(func(t *testing.T, b []byte, n int) {
		if n < 0 || n > 1000 {
			return
		}
		d := NewSpoolReader(bytes.NewReader(b), n)
		for range n + 1 {
			var x Airport
			err := d.Next(&x)
			if err == io.EOF {
				return
			}
			if err != nil {
				if !errors.Is(err, ErrSpoolCorrupt) {
					t.Fatalf("error %v is not ErrSpoolCorrupt", err)
				}
				return
			}
			if len(x.IATACode) > MaxKey || len(x.Name) > MaxText || len(x.City) > MaxText || len(x.Country) > MaxText {
				t.Fatalf("field over its limit: %+v", x)
			}
		}
		t.Fatal("more records than counted")
	})
}

// BenchmarkSpool is the spool's cost per record on top of decoding and
// inserting: add, then read back, 1M generated airports through the
// file (go test ./bulk -run '^$' -bench Spool -benchtime 1x).
func BenchmarkSpool(b *testing.B) {
	const n = 1_000_000
	recs := make([]Airport, n)
	for i := range recs {
		recs[i] = Generated(i)
	}
	b.ResetTimer()
	var size int64
	for range b.N {
		s := NewSpool(SpoolOptions{Dir: b.TempDir()})
		for i := range recs {
			if err := s.Add(&recs[i]); err != nil {
				b.Fatal(err)
			}
		}
		d, err := s.Records()
		if err != nil {
			b.Fatal(err)
		}
		var a Airport
		for d.Next(&a) == nil {
		}
		size = s.Size()
		s.Close()
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*n), "ns/record")
	b.ReportMetric(float64(size)/n, "spool-bytes/record")
}

// The memory part never passes MemBytes and one record, however many
// records go through, so concurrent slow uploads cost a known amount each.
func TestSpoolMemoryIsBounded(t *testing.T) {
	const mem = 8 << 10
	s := NewSpool(SpoolOptions{Dir: t.TempDir(), MemBytes: mem})
	defer s.Close()
	big := Airport{IATACode: strings.Repeat("k", MaxKey), Name: strings.Repeat("n", MaxText), City: strings.Repeat("c", MaxText), Country: strings.Repeat("d", MaxText)}
	for i := range 5000 {
		a := Generated(i)
		if i%7 == 0 {
			a = big
		}
		if err := s.Add(&a); err != nil {
			t.Fatal(err)
		}
		if cap(s.buf) > mem+maxSpooled {
			t.Fatalf("record %d: buffer capacity %d > %d", i, cap(s.buf), mem+maxSpooled)
		}
	}
	if !s.OnDisk() {
		t.Fatal("5000 records stayed in memory")
	}
}
