package kv

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
)

// errTorn marks an incomplete final record: cut by a crash, never
// acknowledged.
var errTorn = errors.New("torn record at the end of the file")

// tornError says why a tail is torn; it matches errTorn.
type tornError struct{ reason string }

func (e *tornError) Error() string        { return "torn tail: " + e.reason }
func (e *tornError) Is(target error) bool { return target == errTorn }

// readRecords reads the records of r after the file header of the given
// format version (1 to 4), from offset base of a file of size bytes,
// calling apply for each. c is the file's chain (version 4: from its
// header; a zero chain before), advanced past each good record. It returns the offset after
// the last good record and nil, a *tornError (the rest is a torn tail) or
// a *CorruptError; an error from apply becomes a CorruptError at that
// record. The rules are in aofformat.go.
func readRecords(r io.ReaderAt, version int, base, size int64, c *chain, apply func([]Op) error) (int64, error) {
	hl := headLen(version)
	br := bufio.NewReaderSize(io.NewSectionReader(r, base, size-base), 1<<16)
	off := base
	head := make([]byte, hl)
	var payload []byte
	var ops []Op
	// corrupt builds the refusal; next is where the record after the bad
	// one starts when its header is trusted, else -1.
	corrupt := func(reason string, next int64) (int64, error) {
		ce := &CorruptError{Offset: off, Reason: reason, Bytes: size - off}
		if zero, _ := zeroFrom(r, off, size); zero {
			ce.Reason += "; every byte from there on is zero (a filesystem can extend a file with zeros in a crash: no record is in them)"
		}
		if version == 1 {
			ce.Intact = chainV1(r, next, size)
		} else {
			from := next
			if from < 0 {
				from = off + 1
			}
			// A trusted header is the next record's link.
			var link uint32
			known := next >= 0 && version >= 3
			if known {
				link = binary.LittleEndian.Uint32(head[12:16])
			}
			ce.Intact, ce.Exact = scanIntact(r, version, from, size, c, link, known), true
		}
		return off, ce
	}
	// zerosFrom: version 1 took a bad record followed only by zero bytes
	// for a cut write in a file the filesystem extended with zeros.
	zerosFrom := func(from int64) (bool, error) {
		if version != 1 || from >= size {
			return false, nil
		}
		return zeroFrom(r, from, size)
	}
	for off < size {
		if size-off < hl {
			return off, &tornError{fmt.Sprintf("%d of the %d header bytes of the final record", size-off, hl)}
		}
		if _, err := io.ReadFull(br, head); err != nil {
			return off, fmt.Errorf("kv: reading AOF at %d: %w", off, err)
		}
		var n int64
		var seq, crc uint32
		if version == 1 {
			n = int64(binary.LittleEndian.Uint32(head))
		} else {
			var ok bool
			if n, seq, crc, ok = checkHead(head, version, c.seed); !ok {
				if version >= 4 {
					if k := otherFile(r, off, size, head); k > 0 {
						return corrupt(fmt.Sprintf("header checksum mismatch: a record of another AOF file (%d records in a row from here check with one other file's ID, not this one's)", k), -1)
					}
					return corrupt("header checksum mismatch (a damaged length, number or checksum, or a record of another AOF file)", -1)
				}
				return corrupt("header checksum mismatch (a damaged length, number or checksum)", -1)
			}
		}
		if want := c.num + 1; version >= 3 && seq != want {
			// The header is as written, so the record is whole (unless
			// its length runs past the end): it was written at another
			// place in the log. The writer numbers every record it
			// appends, so neither a crash nor a cut produces this.
			next := off + hl + n
			if n == 0 || n > maxRecord || next > size {
				next = -1
			}
			return corrupt(fmt.Sprintf("record out of order: it is record %d of the file, record %d belongs here (a record removed, duplicated or moved)", seq, want), next)
		}
		if n == 0 || n > maxRecord {
			if zero, err := zerosFrom(off); err != nil {
				return off, err
			} else if zero {
				return off, &tornError{"zero bytes to the end of the file (version 1 rule)"}
			}
			return corrupt(fmt.Sprintf("record length %d out of range", n), -1)
		}
		end := off + hl + n
		if end > size {
			// Version 2: the header's checksum holds, so this length was
			// written, and the write was cut. Version 1 cannot tell a
			// flipped length from that.
			return off, &tornError{fmt.Sprintf("the final record declares %d payload bytes, %d are present", n, size-off-hl)}
		}
		if int64(cap(payload)) < n {
			payload = make([]byte, n)
		}
		payload = payload[:n]
		if _, err := io.ReadFull(br, payload); err != nil {
			return off, fmt.Errorf("kv: reading AOF at %d: %w", off, err)
		}
		if version == 1 {
			crc = crc32.Update(crc32.Update(0, castagnoli, head[:4]), castagnoli, payload)
			if crc != binary.LittleEndian.Uint32(head[4:]) {
				if zero, err := zerosFrom(end); err != nil {
					return off, err
				} else if zero {
					return off, &tornError{"zero bytes follow a bad record (version 1 rule)"}
				}
				return corrupt("checksum mismatch", end)
			}
		} else if crc32.Update(c.link(version), castagnoli, payload) != crc {
			// Complete, so not a cut write (a cut leaves a prefix), even
			// when it is the final record.
			if version >= 4 {
				return corrupt("payload checksum mismatch (a damaged payload, or a record that does not follow the one before it in this file: of another copy of it whose history differs)", end)
			}
			return corrupt("payload checksum mismatch", end)
		}
		var err error
		if ops, err = decodePayload(payload, ops); err != nil {
			// The checksum matched, so these bytes were written as they
			// are: a bug or tampering, never a torn write.
			return corrupt(err.Error(), end)
		}
		if err := apply(ops); err != nil {
			return corrupt(err.Error(), end)
		}
		off = end
		if version >= 3 {
			c.num, c.last = seq, binary.LittleEndian.Uint32(head[12:16])
		}
	}
	return off, nil
}

// link is the seed of the next payload checksum: the last record's header
// checksum (version 4), 0 before.
func (c *chain) link(version int) uint32 {
	if version < 4 || c.unlinked {
		return 0
	}
	return c.last
}

// otherFile counts the records from the version 4 frame header h at off,
// whose checksum failed with this file's seed, whose headers check with
// one other seed: records of another file, when at least two do (else
// 0). The CRC is affine in its seed, so stored ^ crc(0, bytes) is the
// same for every header of one file and differs between files; a false
// match is a 1-in-2^32 event.
func otherFile(r io.ReaderAt, off, size int64, h []byte) int {
	key := func(h []byte) uint32 {
		return binary.LittleEndian.Uint32(h[12:16]) ^ crc32.Checksum(h[:12], castagnoli)
	}
	want, count := key(h), 1
	var next [frameHead]byte
	for n := int64(binary.LittleEndian.Uint32(h)); n > 0 && n <= maxRecord && off+2*frameHead+n <= size; n = int64(binary.LittleEndian.Uint32(h)) {
		off += frameHead + n
		if _, err := r.ReadAt(next[:], off); err != nil || key(next[:]) != want {
			break
		}
		count++
		h = next[:]
	}
	if count < 2 {
		return 0
	}
	return count
}

// headLen is the frame header's size in a format version.
func headLen(version int) int64 {
	switch version {
	case 1:
		return frameHead1
	case 2:
		return frameHead2
	}
	return frameHead // 3 and 4
}

// scanIntact counts the version 2 to 4 records with good checksums from
// from to the end, whatever their numbers, resynchronising byte by byte
// after damage: a header has its own checksum (with c's seed: records of
// another file are not counted), so a false match is a 1-in-2^32 event.
// A version 4 payload is checked against the header before it when that
// is known (link, known: the record before it was counted, or the bad
// record's header held); the first record found after damaged bytes is
// counted on its header alone.
func scanIntact(r io.ReaderAt, version int, from, size int64, c *chain, link uint32, known bool) int {
	hl := headLen(version)
	const window = 1 << 20
	buf := make([]byte, window)
	bufOff, bufLen := int64(-1), int64(0)
	count := 0
	for p := from; p >= 0 && p+hl <= size; {
		if p < bufOff || p+hl > bufOff+bufLen {
			bufLen = min(window, size-p)
			if n, _ := r.ReadAt(buf[:bufLen], p); int64(n) < bufLen {
				return count
			}
			bufOff = p
		}
		h := buf[p-bufOff:]
		n, _, crc, ok := checkHead(h, version, c.seed)
		if ok && n > 0 && n <= maxRecord && p+hl+n <= size {
			linked := version >= 4 && !c.unlinked
			var seed uint32
			if linked {
				seed = link
			}
			if (linked && !known) || payloadOK(r, p+hl, n, seed, crc) {
				count++
				if version >= 3 {
					link, known = binary.LittleEndian.Uint32(h[12:16]), true
				}
				p += hl + n
				continue
			}
		}
		known = false
		p++
	}
	return count
}

// chainV1 counts the good version 1 records from next on, stopping at the
// first bad one: without a header checksum there is no resynchronising.
func chainV1(r io.ReaderAt, next, size int64) int {
	count := 0
	var head [frameHead1]byte
	for next >= 0 && next+frameHead1 <= size {
		if _, err := r.ReadAt(head[:], next); err != nil {
			break
		}
		n := int64(binary.LittleEndian.Uint32(head[:]))
		if n == 0 || n > maxRecord || next+frameHead1+n > size {
			break
		}
		h := crc32.New(castagnoli)
		h.Write(head[:4])
		if _, err := io.Copy(h, io.NewSectionReader(r, next+frameHead1, n)); err != nil || h.Sum32() != binary.LittleEndian.Uint32(head[4:]) {
			break
		}
		count++
		next += frameHead1 + n
	}
	return count
}

// payloadOK streams n bytes at off through the checksum seeded with
// seed, so a length that only looks plausible allocates nothing.
func payloadOK(r io.ReaderAt, off, n int64, seed, crc uint32) bool {
	sum := seed
	buf := make([]byte, min(n, 1<<16))
	for n > 0 {
		k := min(n, int64(len(buf)))
		if m, _ := r.ReadAt(buf[:k], off); int64(m) < k {
			return false
		}
		sum = crc32.Update(sum, castagnoli, buf[:k])
		off, n = off+k, n-k
	}
	return sum == crc
}
