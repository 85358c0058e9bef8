package bulk

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
)

// A Spool keeps a request's decoded records aside — in memory up to
// MemBytes, then in an unlinked temporary file — so that the records of a
// body still arriving are written to the database only once the body has
// all arrived, in one short transaction that never waits for a client.
//
// Spool format, one record after another, nothing before or after (the
// spool is private to one request and read back by the process that wrote
// it; its reader still checks every length, as a parser of bytes on disk):
//
//	+-----------+-----------+-----------+-----------+------+------+------+---------+
//	| len(iata) | len(name) | len(city) | len(ctry) | iata | name | city | country |
//	|  uvarint  |  uvarint  |  uvarint  |  uvarint  | ...  | ...  | ...  |   ...   |
//	+-----------+-----------+-----------+-----------+------+------+------+---------+
//
// A length over its field's limit (MaxKey, MaxText), a record cut short
// or bytes after the last counted record are ErrSpoolCorrupt.
type Spool struct {
	o     SpoolOptions
	buf   []byte   // records not yet in the file (all of them while f is nil)
	f     *os.File // nil until buf first passes MemBytes
	size  int64    // bytes spooled, memory and file
	n     int      // records spooled
	err   error    // sticky: a failed write leaves the spool unusable
	done  bool     // Records was called: no more Add
	close func() error
}

// SpoolOptions bound a Spool; the zero value is the defaults.
type SpoolOptions struct {
	// Dir holds the temporary file ("" is os.TempDir()). Put it on a disk
	// with room for MaxBytes: the database's own directory is a good one.
	Dir string
	// MemBytes is how much is kept in memory before the file is used, and
	// the size of each write to it; 0 is DefaultSpoolMem.
	MemBytes int
	// MaxBytes bounds the spool (records in the format above, a little
	// less than the same records as CSV); Add past it returns
	// ErrSpoolFull. 0 is DefaultMaxSpool.
	MaxBytes int64
}

// Spool defaults. DefaultSpoolMem is per request, and requests receive
// at once: 64 KiB (with the decoder's 32 KiB) keeps a thousand slow
// uploads under 100 MiB, and a million records cost about 900 writes.
const (
	DefaultSpoolMem = 64 << 10
	DefaultMaxSpool = 2 << 30
)

// Spool errors: ErrSpoolFull when a record would pass MaxBytes,
// ErrSpoolCorrupt when the spool reads back wrong, ErrSpoolIO when its
// file cannot be written or read.
var (
	ErrSpoolFull    = errors.New("spool full")
	ErrSpoolCorrupt = errors.New("spool corrupt")
	ErrSpoolIO      = errors.New("spool file")
)

// NewSpool returns an empty spool; Close releases it.
func NewSpool(o SpoolOptions) *Spool {
	if o.MemBytes <= 0 {
		o.MemBytes = DefaultSpoolMem
	}
	if o.MaxBytes <= 0 {
		o.MaxBytes = DefaultMaxSpool
	}
	return &Spool{o: o}
}

// Len is the number of records spooled; Size their bytes in the spool.
func (s *Spool) Len() int     { return s.n }
func (s *Spool) Size() int64  { return s.size }
func (s *Spool) OnDisk() bool { return s.f != nil }

// Add appends a copy of a. Past MaxBytes it returns an error wrapping
// ErrSpoolFull and the spool keeps what it had.
func (s *Spool) Add(a *Airport) error {
	if s.err != nil {
		return s.err
	}
	if s.done {
		return errors.New("bulk: Spool.Add after Records")
	}
	n := len(s.buf)
	if cap(s.buf)-n < maxSpooled {
		// Grown by hand, so that the buffer never passes MemBytes plus
		// one record (len < MemBytes here: it is flushed at MemBytes).
		nb := make([]byte, n, min(max(2*cap(s.buf), 4<<10), s.o.MemBytes+maxSpooled))
		copy(nb, s.buf)
		s.buf = nb
	}
	s.buf = appendSpooled(s.buf, a)
	if s.size+int64(len(s.buf)-n) > s.o.MaxBytes {
		s.buf = s.buf[:n]
		return fmt.Errorf("%w: record %d would take the spool past its limit of %d bytes", ErrSpoolFull, s.n, s.o.MaxBytes)
	}
	s.size += int64(len(s.buf) - n)
	s.n++
	if len(s.buf) >= s.o.MemBytes {
		return s.flush()
	}
	return nil
}

// maxSpooled is the longest record in the spool format.
const maxSpooled = 4*binary.MaxVarintLen16 + MaxKey + 3*MaxText

func appendSpooled(b []byte, a *Airport) []byte {
	b = binary.AppendUvarint(b, uint64(len(a.IATACode)))
	b = binary.AppendUvarint(b, uint64(len(a.Name)))
	b = binary.AppendUvarint(b, uint64(len(a.City)))
	b = binary.AppendUvarint(b, uint64(len(a.Country)))
	b = append(b, a.IATACode...)
	b = append(b, a.Name...)
	b = append(b, a.City...)
	return append(b, a.Country...)
}

// flush moves buf to the file, creating it (unlinked at once, so that
// nothing is left behind by a crash) on first use.
func (s *Spool) flush() error {
	if s.f == nil {
		f, err := os.CreateTemp(s.o.Dir, "wirebench-spool-*")
		if err != nil {
			s.err = fmt.Errorf("%w: %w", ErrSpoolIO, err)
			return s.err
		}
		s.f = f
		s.close = f.Close
		if os.Remove(f.Name()) != nil { // a system that keeps open files from being removed
			s.close = func() error { err := f.Close(); os.Remove(f.Name()); return err }
		}
	}
	if _, err := s.f.Write(s.buf); err != nil {
		s.err = fmt.Errorf("%w: write: %w", ErrSpoolIO, err)
		return s.err
	}
	s.buf = s.buf[:0]
	return nil
}

// Records returns a Decoder over the spooled records, in the order they
// were added; after it the spool takes no more records. Its errors wrap
// ErrSpoolCorrupt or ErrSpoolIO, never a *RecordError: every record was
// valid when added.
func (s *Spool) Records() (Decoder, error) {
	if s.err != nil {
		return nil, s.err
	}
	s.done = true
	if s.f == nil {
		return NewSpoolReader(bytes.NewReader(s.buf), s.n), nil
	}
	if len(s.buf) > 0 {
		if err := s.flush(); err != nil {
			return nil, err
		}
	}
	if _, err := s.f.Seek(0, io.SeekStart); err != nil {
		return nil, fmt.Errorf("%w: seek: %w", ErrSpoolIO, err)
	}
	return NewSpoolReader(bufio.NewReaderSize(s.f, 64<<10), s.n), nil
}

// Close releases the spool's memory and file.
func (s *Spool) Close() error {
	s.buf = nil
	s.err = errors.New("bulk: spool closed")
	if s.close == nil {
		return nil
	}
	err := s.close()
	s.close, s.f = nil, nil
	return err
}

// spoolReader decodes the spool format (see Spool).
type spoolReader struct {
	r    io.ByteReader
	rr   io.Reader
	want int // records left
	i    int
	buf  []byte
}

// NewSpoolReader decodes n records in the spool format from r (an
// io.ByteReader too, as bufio.Reader and bytes.Reader are).
func NewSpoolReader(r interface {
	io.Reader
	io.ByteReader
}, n int) Decoder {
	return &spoolReader{r: r, rr: r, want: n}
}

func (s *spoolReader) Next(a *Airport) error {
	if s.want == 0 {
		if _, err := s.r.ReadByte(); err != io.EOF {
			return s.corrupt("data after the last record")
		}
		return io.EOF
	}
	var l [4]uint64
	total := 0
	for k := range l {
		v, err := binary.ReadUvarint(s.r)
		if err != nil {
			if err != io.EOF && err != io.ErrUnexpectedEOF && !isIOErr(err) {
				return s.corrupt("bad length: " + err.Error()) // an overlong varint
			}
			return s.fail("length", err)
		}
		lim := uint64(MaxText)
		if k == 0 {
			lim = MaxKey
		}
		if v > lim {
			return s.corrupt(fmt.Sprintf("%s of %d bytes (limit %d)", Fields[k], v, lim))
		}
		l[k] = v
		total += int(v)
	}
	if cap(s.buf) < total {
		s.buf = make([]byte, total, max(total, 4<<10))
	}
	b := s.buf[:total]
	if _, err := io.ReadFull(s.rr, b); err != nil {
		return s.fail("fields", err)
	}
	str := string(b) // one allocation for the four fields
	o1, o2, o3 := l[0], l[0]+l[1], l[0]+l[1]+l[2]
	a.IATACode, a.Name, a.City, a.Country = str[:o1], str[o1:o2], str[o2:o3], str[o3:]
	s.want--
	s.i++
	return nil
}

// isIOErr: ReadUvarint returns the reader's own errors as they are, and
// its overflow error (unexported) otherwise.
func isIOErr(err error) bool {
	var pe *os.PathError
	return errors.As(err, &pe) || errors.Is(err, os.ErrClosed)
}

func (s *spoolReader) corrupt(why string) error {
	return fmt.Errorf("%w: record %d: %s", ErrSpoolCorrupt, s.i, why)
}

func (s *spoolReader) fail(what string, err error) error {
	if err == io.EOF || err == io.ErrUnexpectedEOF {
		return s.corrupt(what + " cut short")
	}
	return fmt.Errorf("%w: read record %d: %w", ErrSpoolIO, s.i, err)
}
