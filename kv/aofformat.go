package kv

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
)

// The append-only file: a magic header, then CRC-framed records.
//
//	file:    "WBKVAOF1" record record record ...
//
//	record:  0        4          8
//	         +--------+----------+---------------------------+
//	         |  len   |  crc32c  |  payload (len bytes)      |
//	         +--------+----------+---------------------------+
//	         len:    uint32 little-endian, 1..maxRecord
//	         crc32c: Castagnoli CRC of the 4 len bytes then the payload,
//	                 uint32 little-endian (a torn or flipped len fails it)
//
//	payload: one or more ops, applied together or not at all
//	         (MSET and a multi-key DEL are one record: atomic on replay)
//
//	op:      0x01 SET        exp:uvarint klen:uvarint key vlen:uvarint val
//	         0x02 DEL        klen:uvarint key
//	         0x03 PEXPIREAT  exp:uvarint klen:uvarint key   (exp 0: persist)
//	         0x04 FLUSHALL
//	         0x05 META       mlen:uvarint meta   (replication position, tap.go)
//
// exp is an absolute time in Unix milliseconds (0: none), so expiry
// survives restarts; a replayed SET whose time has passed is dropped.
// Every op sets state outright (APPEND and INCR log the resulting value),
// so replaying a suffix twice converges: the rewrite relies on it.
//
// At start the reader stops at the first bad record. When that record
// runs to the end of the file, or only zero bytes follow it, it is a torn
// tail (a write cut by a crash, never acknowledged): the file is truncated
// there and the cut is logged. Anything else is corruption in the middle:
// Open refuses with the offset, unless Options.Repair truncates there.
const (
	aofMagic  = "WBKVAOF1"
	frameHead = 8
	// maxRecord bounds one record: an MSET of large values still fits,
	// and a flipped length byte cannot make the reader allocate gigabytes.
	maxRecord = MaxValueLen + 64<<20
)

const (
	opSet      = 1
	opDel      = 2
	opExpireAt = 3
	opFlushAll = 4
)

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// Errors of the AOF reader.
var (
	ErrBadMagic = errors.New("kv: not a wirebench AOF (bad magic)")
	ErrCorrupt  = errors.New("kv: corrupt AOF record")
)

// CorruptError is a bad record that is not a torn tail.
type CorruptError struct {
	Offset int64
	Reason string
}

func (e *CorruptError) Error() string {
	return fmt.Sprintf("kv: corrupt AOF record at offset %d: %s (start with --aof-repair to truncate the file there, losing what follows)", e.Offset, e.Reason)
}

func (e *CorruptError) Unwrap() error { return ErrCorrupt }

// beginFrame reserves a frame header at the end of b.
func beginFrame(b []byte) ([]byte, int) {
	return append(b, 0, 0, 0, 0, 0, 0, 0, 0), len(b)
}

// endFrame fills the header of the frame starting at start.
func endFrame(b []byte, start int) []byte {
	n := len(b) - start - frameHead
	binary.LittleEndian.PutUint32(b[start:], uint32(n))
	crc := crc32.Update(0, castagnoli, b[start:start+4])
	crc = crc32.Update(crc, castagnoli, b[start+frameHead:])
	binary.LittleEndian.PutUint32(b[start+4:], crc)
	return b
}

func appendSetOp(b []byte, key string, val []byte, exp int64) []byte {
	b = append(b, opSet)
	b = binary.AppendUvarint(b, uint64(exp))
	b = binary.AppendUvarint(b, uint64(len(key)))
	b = append(b, key...)
	b = binary.AppendUvarint(b, uint64(len(val)))
	return append(b, val...)
}

func appendDelOp(b []byte, key string) []byte {
	b = append(b, opDel)
	b = binary.AppendUvarint(b, uint64(len(key)))
	return append(b, key...)
}

func appendExpireOp(b []byte, key string, exp int64) []byte {
	b = append(b, opExpireAt)
	b = binary.AppendUvarint(b, uint64(exp))
	b = binary.AppendUvarint(b, uint64(len(key)))
	return append(b, key...)
}

// Op is one decoded operation of a record.
type Op struct {
	Code byte
	Key  []byte // aliases the payload
	Val  []byte // aliases the payload
	Exp  int64
}

// decodePayload parses all ops of a payload; it fails without partial
// results, so a record is applied whole or not at all.
func decodePayload(p []byte, ops []Op) ([]Op, error) {
	ops = ops[:0]
	if len(p) == 0 {
		return nil, errors.New("empty payload")
	}
	for len(p) > 0 {
		var op Op
		op.Code = p[0]
		p = p[1:]
		var err error
		switch op.Code {
		case opSet:
			var exp uint64
			if exp, p, err = uvarint(p); err != nil {
				return nil, err
			}
			op.Exp = int64(exp)
			if op.Key, p, err = lenBytes(p, MaxKeyLen); err != nil {
				return nil, err
			}
			if op.Val, p, err = lenBytes(p, MaxValueLen); err != nil {
				return nil, err
			}
		case opDel:
			if op.Key, p, err = lenBytes(p, MaxKeyLen); err != nil {
				return nil, err
			}
		case opExpireAt:
			var exp uint64
			if exp, p, err = uvarint(p); err != nil {
				return nil, err
			}
			op.Exp = int64(exp)
			if op.Key, p, err = lenBytes(p, MaxKeyLen); err != nil {
				return nil, err
			}
		case opFlushAll:
		case opMeta:
			if op.Val, p, err = lenBytes(p, MaxMetaLen); err != nil {
				return nil, err
			}
		default:
			return nil, fmt.Errorf("unknown op 0x%02x", op.Code)
		}
		if op.Exp < 0 {
			return nil, errors.New("expiry out of range")
		}
		if op.Code != opFlushAll && op.Code != opMeta && len(op.Key) == 0 {
			return nil, errors.New("empty key")
		}
		ops = append(ops, op)
	}
	return ops, nil
}

func uvarint(p []byte) (uint64, []byte, error) {
	v, n := binary.Uvarint(p)
	if n <= 0 {
		return 0, nil, errors.New("bad varint")
	}
	return v, p[n:], nil
}

func lenBytes(p []byte, limit int) ([]byte, []byte, error) {
	n, p, err := uvarint(p)
	if err != nil {
		return nil, nil, err
	}
	if n > uint64(limit) || n > uint64(len(p)) {
		return nil, nil, fmt.Errorf("length %d out of range", n)
	}
	return p[:n], p[n:], nil
}

// errTorn marks a record cut at the end of the file.
var errTorn = errors.New("torn record at the end of the file")

// readRecords reads the records of r (positioned after the magic, at
// offset base of a file of size bytes), calling apply for each. It returns
// the offset after the last good record and nil, errTorn (the rest is a
// torn tail) or a *CorruptError; zeroTail reports whether the file's bytes
// from an offset to its end are all zero.
func readRecords(r io.Reader, base, size int64, zeroTail func(off int64) (bool, error), apply func([]Op) error) (int64, error) {
	br := bufio.NewReaderSize(r, 1<<16)
	off := base
	var head [frameHead]byte
	var payload []byte
	var ops []Op
	for {
		if off == size {
			return off, nil
		}
		// bad classifies a bad record: torn when it reaches the end of
		// the file or only zeros follow from zeroFrom (a cut write in a
		// file the filesystem extended with zeros), else corrupt.
		bad := func(reason string, end, zeroFrom int64) (int64, error) {
			if end >= size {
				return off, errTorn
			}
			zero, err := zeroTail(zeroFrom)
			if err != nil {
				return off, err
			}
			if zero {
				return off, errTorn
			}
			return off, &CorruptError{Offset: off, Reason: reason}
		}
		if size-off < frameHead {
			return bad("short header", size, off)
		}
		if _, err := io.ReadFull(br, head[:]); err != nil {
			return off, fmt.Errorf("kv: reading AOF at %d: %w", off, err)
		}
		n := int64(binary.LittleEndian.Uint32(head[:4]))
		if n == 0 || n > maxRecord {
			return bad(fmt.Sprintf("record length %d out of range", n), off, off)
		}
		end := off + frameHead + n
		if end > size {
			// A plausible length running past the end: the write of
			// this record was cut. (A flipped length byte that still
			// looks plausible cannot be told from that.)
			return off, errTorn
		}
		if int64(cap(payload)) < n {
			payload = make([]byte, n)
		}
		payload = payload[:n]
		if _, err := io.ReadFull(br, payload); err != nil {
			return off, fmt.Errorf("kv: reading AOF at %d: %w", off, err)
		}
		crc := crc32.Update(0, castagnoli, head[:4])
		crc = crc32.Update(crc, castagnoli, payload)
		if crc != binary.LittleEndian.Uint32(head[4:]) {
			return bad("checksum mismatch", end, end)
		}
		var err error
		if ops, err = decodePayload(payload, ops); err != nil {
			// The checksum matched, so these bytes were written as they
			// are: a bug or tampering, never a torn write.
			return off, &CorruptError{Offset: off, Reason: err.Error()}
		}
		if err := apply(ops); err != nil {
			return off, err
		}
		off = end
	}
}
