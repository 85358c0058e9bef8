package bulk

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"slices"
)

// Why sort: a request's records arrive in any key order, and an insert
// in key order into SQLite's primary-key index lands on a random leaf
// page each time. Past the page cache (2 MB) that is a pread and later a
// pwrite of a 4 KiB page per record, nearly all of a million-record
// upload's time. In key order the same inserts append to the index, each
// page written once. Spool.Sorted puts the spooled records in key order
// with an external merge sort that reuses the spool's own file: runs of
// SortOptions.RunBytes are read, sorted in memory and written back where
// they were (a sorted run has the same bytes as its records in arrival
// order, so it fits its place exactly), then merged as they are read.
//
// The order is iata_code's bytes (memcmp, then length: SQLite's BINARY
// collation, the index's own order) and, among equal keys, arrival: the
// last record of a key is still the last one upserted.

// SortOptions bound Spool.Sorted's memory; the zero value is the defaults.
type SortOptions struct {
	// RunBytes of the spool are sorted at a time, in memory (plus 16
	// bytes per record of index). 0 is DefaultSortRun.
	RunBytes int
	// MergeBytes are the merge's read buffers, split among the runs (4
	// to 64 KiB each). 0 is DefaultSortMerge.
	MergeBytes int
}

// Sort defaults: 4 MiB runs make a million airports (57 MB spooled) 14
// runs; with their index a run costs about 5 MiB while it is sorted.
const (
	DefaultSortRun   = 4 << 20
	DefaultSortMerge = 1 << 20
)

// sortEntry locates one record of a run in its buffer; pre is the key's
// first 8 bytes, big-endian, so that most comparisons are one integer's.
type sortEntry struct {
	pre  uint64
	rec  uint32 // record start in the buffer
	size uint16 // record bytes (at most maxSpooled)
	hdr  uint8  // bytes of the four lengths: the key starts at rec+hdr
	klen uint8  // key bytes (at most MaxKey)
}

func (e *sortEntry) key(buf []byte) []byte {
	k := int(e.rec) + int(e.hdr)
	return buf[k : k+int(e.klen)]
}

// parseRun indexes the whole records at the start of buf into es: the
// bytes they take, or an error wrapping ErrSpoolCorrupt for a length over
// its limit. A record cut short at the end of buf is left for the caller.
// first is the index of buf's first record, for messages.
func parseRun(buf []byte, es []sortEntry, first int) (int, []sortEntry, error) {
	off := 0
	for {
		p := off
		var l [4]uint64
		total := 0
		for k := range l {
			v, n := binary.Uvarint(buf[p:])
			if n == 0 {
				return off, es, nil // cut short: the next chunk has the rest
			}
			if n < 0 {
				return off, es, fmt.Errorf("%w: record %d: bad length", ErrSpoolCorrupt, first+len(es))
			}
			lim := uint64(MaxText)
			if k == 0 {
				lim = MaxKey
			}
			if v > lim {
				return off, es, fmt.Errorf("%w: record %d: %s of %d bytes (limit %d)", ErrSpoolCorrupt, first+len(es), Fields[k], v, lim)
			}
			l[k] = v
			total += int(v)
			p += n
		}
		hdr := p - off
		if len(buf)-p < total {
			return off, es, nil
		}
		key := buf[p : p+int(l[0])]
		var pre [8]byte
		copy(pre[:], key)
		es = append(es, sortEntry{pre: binary.BigEndian.Uint64(pre[:]), rec: uint32(off), size: uint16(hdr + total), hdr: uint8(hdr), klen: uint8(l[0])})
		off = p + total
	}
}

// sortRun sorts es by key, then by position (arrival).
func sortRun(buf []byte, es []sortEntry) {
	slices.SortFunc(es, func(a, b sortEntry) int {
		if a.pre != b.pre {
			if a.pre < b.pre {
				return -1
			}
			return 1
		}
		if c := bytes.Compare(a.key(buf), b.key(buf)); c != 0 {
			return c
		}
		return int(a.rec) - int(b.rec)
	})
}

// Sorted returns a Decoder over the spooled records in key order (see
// above); after it the spool takes no more records. It does the sorting
// itself, in RunBytes of memory, before it returns; the Decoder opens its
// merge buffers at its first Next. Its errors wrap ErrSpoolCorrupt or
// ErrSpoolIO.
func (s *Spool) Sorted(o SortOptions) (Decoder, error) {
	if s.err != nil {
		return nil, s.err
	}
	if o.RunBytes <= 0 {
		o.RunBytes = DefaultSortRun
	}
	o.RunBytes = max(o.RunBytes, 2*maxSpooled)
	if o.MergeBytes <= 0 {
		o.MergeBytes = DefaultSortMerge
	}
	s.done = true
	if s.f == nil {
		// All in memory (at most MemBytes and a record): one run.
		used, es, err := parseRun(s.buf, make([]sortEntry, 0, s.n), 0)
		if err == nil && (used != len(s.buf) || len(es) != s.n) {
			err = fmt.Errorf("%w: %d of %d records in %d of %d bytes", ErrSpoolCorrupt, len(es), s.n, used, len(s.buf))
		}
		if err != nil {
			return nil, err
		}
		sortRun(s.buf, es)
		out := make([]byte, 0, len(s.buf))
		for i := range es {
			out = append(out, s.buf[es[i].rec:int(es[i].rec)+int(es[i].size)]...)
		}
		s.buf = nil
		return NewSpoolReader(bytes.NewReader(out), s.n), nil
	}
	if len(s.buf) > 0 {
		if err := s.flush(); err != nil {
			return nil, err
		}
	}
	s.buf = nil
	runs, err := s.sortRuns(o.RunBytes)
	if err != nil {
		s.err = err
		return nil, err
	}
	return &merger{s: s, runs: runs, bufSize: min(max(o.MergeBytes/max(len(runs), 1), 4<<10), 64<<10)}, nil
}

// run is one sorted stretch of the spool's file.
type run struct {
	off, size int64
	n         int
}

// sortRuns reads the spool's file a chunk at a time, sorts each chunk's
// whole records and writes them back in place.
func (s *Spool) sortRuns(runBytes int) ([]run, error) {
	mem := newRunMem(runBytes)
	defer mem.free() // nothing below keeps a slice of mem past here
	buf, es := mem.buf, mem.es
	out := bufio.NewWriterSize(nil, 64<<10)
	var runs []run
	var pos int64 // file offset of buf[0]
	have, recs := 0, 0
	for pos < s.size {
		n, err := s.f.ReadAt(buf[have:int(min(int64(len(buf)), s.size-pos))], pos+int64(have))
		have += n
		switch {
		case err == io.EOF && pos+int64(have) < s.size:
			return nil, fmt.Errorf("%w: file cut short at %d of %d bytes", ErrSpoolCorrupt, pos+int64(have), s.size)
		case err != nil && err != io.EOF:
			return nil, fmt.Errorf("%w: read at %d: %w", ErrSpoolIO, pos+int64(have), err)
		}
		used, nes, err := parseRun(buf[:have], es[:0], recs)
		es = nes
		if err != nil {
			return nil, err
		}
		if used == 0 {
			return nil, fmt.Errorf("%w: record %d cut short", ErrSpoolCorrupt, recs)
		}
		sortRun(buf, es)
		out.Reset(io.NewOffsetWriter(s.f, pos))
		for i := range es {
			out.Write(buf[es[i].rec : int(es[i].rec)+int(es[i].size)])
		}
		if err := out.Flush(); err != nil {
			return nil, fmt.Errorf("%w: write run at %d: %w", ErrSpoolIO, pos, err)
		}
		runs = append(runs, run{off: pos, size: int64(used), n: len(es)})
		recs += len(es)
		have = copy(buf, buf[used:have])
		pos += int64(used)
	}
	if recs != s.n {
		return nil, fmt.Errorf("%w: %d records in the file, %d spooled", ErrSpoolCorrupt, recs, s.n)
	}
	return runs, nil
}

// merger merges the sorted runs: a binary min-heap of each run's next
// record, ties going to the earlier run (the earlier arrival).
type merger struct {
	s       *Spool
	runs    []run
	bufSize int
	heads   []*mergeHead // the heap; nil until the first Next
	started bool
}

type mergeHead struct {
	d   Decoder
	a   Airport
	run int
}

func (h *mergeHead) less(o *mergeHead) bool {
	if h.a.IATACode != o.a.IATACode {
		return h.a.IATACode < o.a.IATACode
	}
	return h.run < o.run
}

func (m *merger) Next(a *Airport) error {
	if !m.started {
		m.started = true
		for i, r := range m.runs {
			h := &mergeHead{d: NewSpoolReader(bufio.NewReaderSize(io.NewSectionReader(m.s.f, r.off, r.size), m.bufSize), r.n), run: i}
			if err := m.advance(h); err == io.EOF {
				continue
			} else if err != nil {
				return err
			}
			m.heads = append(m.heads, h)
		}
		for i := len(m.heads)/2 - 1; i >= 0; i-- {
			m.down(i)
		}
	}
	if len(m.heads) == 0 {
		return io.EOF
	}
	top := m.heads[0]
	*a = top.a
	switch err := m.advance(top); {
	case err == io.EOF:
		last := len(m.heads) - 1
		m.heads[0] = m.heads[last]
		m.heads[last] = nil
		m.heads = m.heads[:last]
	case err != nil:
		return err
	}
	m.down(0)
	return nil
}

func (m *merger) advance(h *mergeHead) error {
	err := h.d.Next(&h.a)
	if err != nil && err != io.EOF && !errors.Is(err, ErrSpoolCorrupt) && !errors.Is(err, ErrSpoolIO) {
		err = fmt.Errorf("%w: %w", ErrSpoolIO, err)
	}
	return err
}

func (m *merger) down(i int) {
	h := m.heads
	for {
		l := 2*i + 1
		if l >= len(h) {
			return
		}
		c := l
		if r := l + 1; r < len(h) && h[r].less(h[l]) {
			c = r
		}
		if !h[c].less(h[i]) {
			return
		}
		h[i], h[c] = h[c], h[i]
		i = c
	}
}
