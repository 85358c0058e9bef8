package bulk

import "io"

// scanReader is the JSON decoder's read buffer: the part of bufio.Reader
// it needs (Peek, Discard, ReadByte), with fast paths small enough to be
// inlined. bufio's Peek and Discard are not, and their calls were a
// quarter of the decoder's CPU (go test -bench DecodeJSON -cpuprofile).
//
//	buf: [ consumed | r ... w: buffered | free ]
//
// A read error (io.EOF included) is sticky: once the buffered bytes are
// used up, every call returns it.
type scanReader struct {
	buf  []byte
	r, w int
	src  io.Reader
	err  error
	n    int64 // bytes read from src
}

// maxEmptyReads bounds reads that return neither bytes nor an error, as
// bufio does, so a broken reader cannot spin the decoder forever.
const maxEmptyReads = 100

func newScanReader(src io.Reader, size int) *scanReader {
	return &scanReader{buf: make([]byte, size), src: src}
}

// Buffered is the number of bytes read from src and not yet consumed.
func (b *scanReader) Buffered() int { return b.w - b.r }

// offset is the input offset of the next unconsumed byte.
func (b *scanReader) offset() int64 { return b.n - int64(b.w-b.r) }

// avail returns every buffered byte, reading first if there is none: it
// is empty only at the end of the input, with the read error.
func (b *scanReader) avail() ([]byte, error) {
	if b.r < b.w {
		return b.buf[b.r:b.w], nil
	}
	return b.fill(1)
}

// Peek returns the next n bytes without consuming them (n at most the
// buffer's size); fewer, with the read error, at the end of the input.
func (b *scanReader) Peek(n int) ([]byte, error) {
	if n <= b.w-b.r {
		return b.buf[b.r : b.r+n], nil
	}
	p, err := b.fill(n)
	if len(p) >= n {
		return p[:n], nil
	}
	return p, err
}

// Discard consumes n buffered bytes (never more than are buffered).
func (b *scanReader) Discard(n int) { b.r += min(n, b.w-b.r) }

// ReadByte consumes and returns the next byte.
func (b *scanReader) ReadByte() (byte, error) {
	if b.r == b.w {
		if p, err := b.fill(1); len(p) == 0 {
			return 0, err
		}
	}
	c := b.buf[b.r]
	b.r++
	return c, nil
}

// fill reads until n bytes are buffered or the input ends, and returns
// the buffered bytes with the read error if fewer than n.
func (b *scanReader) fill(n int) ([]byte, error) {
	n = min(n, len(b.buf))
	if b.r > 0 && b.w-b.r < n {
		copy(b.buf, b.buf[b.r:b.w])
		b.w -= b.r
		b.r = 0
	}
	for empty := 0; b.w-b.r < n && b.err == nil; {
		m, err := b.src.Read(b.buf[b.w:])
		if m < 0 || m > len(b.buf)-b.w {
			b.err = io.ErrShortBuffer // a broken reader; bufio panics here
			break
		}
		b.w += m
		b.n += int64(m)
		if err != nil {
			b.err = err
		} else if m == 0 {
			if empty++; empty >= maxEmptyReads {
				b.err = io.ErrNoProgress
			}
		}
	}
	if b.w-b.r < n {
		return b.buf[b.r:b.w], b.err
	}
	return b.buf[b.r:b.w], nil
}
