package kv

import (
	"crypto/rand"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
)

// The append-only file: a header naming the format's version and the
// file's identity, then CRC-framed records. Version 4 (written since each
// file carries an identity and its records a chain):
//
//	file:    header record record record ...
//
//	header:  0          8                    24         28
//	         +----------+--------------------+----------+
//	         | WBKVAOF4 | file ID (16 bytes) | crc32c   |
//	         |          | random, per file   | of 0..24 |
//	         +----------+--------------------+----------+
//
//	record:  0        4        8          12         16
//	         +--------+--------+----------+----------+--------------------+
//	         |  len   |  seq   | payload  | header   | payload (len bytes)|
//	         |        |        | crc      | crc      |                    |
//	         +--------+--------+----------+----------+--------------------+
//	         len:    1..maxRecord
//	         seq:    the record's number in this file: 1, 2, 3, ...
//	                 (modulo 2^32), so a record removed, duplicated or
//	                 moved is found like a flipped byte
//	         payload crc: Castagnoli CRC of the payload, seeded with the
//	                 header crc of the record before (the file's seed for
//	                 record 1): a chain, so a record that does not follow
//	                 the one before it in this file's history fails
//	         header crc:  Castagnoli CRC of bytes 0..12 (len, seq and the
//	                      payload crc), seeded with the file's seed, so a
//	                      flipped length or number is detected before it is
//	                      trusted, and a record of another file fails
//	         seed:   Castagnoli CRC of the file ID
//	         (all uint32 little-endian)
//
//	payload: one or more ops, applied together or not at all
//	         (MSET and a multi-key DEL are one record: atomic on replay)
//
//	op:      0x01 SET        exp:uvarint klen:uvarint key vlen:uvarint val
//	         0x02 DEL        klen:uvarint key
//	         0x03 PEXPIREAT  exp:uvarint klen:uvarint key   (exp 0: persist)
//	         0x04 FLUSHALL
//	         0x05 META       mlen:uvarint meta   (replication position, tap.go)
//	         0x06 APPEND     exp:uvarint klen:uvarint key total:uvarint vlen:uvarint val
//	                         (key holds total-vlen bytes and gets val appended;
//	                         exp is its unchanged expiry; versions 2 to 4)
//
// exp is an absolute time in Unix milliseconds (0: none), so expiry
// survives restarts; a replayed SET whose time has passed is dropped.
// APPEND to an existing key is logged as the command (50 one-byte APPENDs
// to a 10 MiB value log 50 small records, not 500 MiB); replay checks that
// the key holds total-vlen bytes. APPEND is not idempotent: the
// replication tap and a rewrite's tail (records logged while the snapshot
// is taken, which may also be in it) get the resulting value as a SET
// instead, so replaying a suffix twice still converges there. INCR-family
// commands log their result as a SET: at most 20 bytes, the size of the
// command.
//
// Every file gets a new ID when it is created: a new file, a rewrite (or
// a replica's snapshot swapped in), each numbering its records from 1 and
// starting its chain at its own seed; the records logged meanwhile are
// renumbered and re-chained for the new file, and the records appended
// later continue both. What the three buy: the header crc says a record
// was written for this file (two servers' files of the same history
// differ in every record), the number says where in the file it belongs,
// and the chain says that every record before it is the one it was
// written after — so a record or a tail from another file, from a copy
// of this file from before a rewrite, or from a copy whose history forked
// (at an --aof-repair cut or a refused write) is refused at its offset
// like a flipped byte. A file cut exactly at a record boundary is still a
// whole, shorter log: nothing inside the file can tell it from a log that
// ended there, and the same holds for a whole older copy of the file.
//
// Recovery (readRecords) tells a torn tail from corruption. A record is
// acknowledged only after its whole frame was written (and, for always,
// fsynced), and records are only ever appended, so a crash can leave at
// most an incomplete final record: fewer than 16 header bytes before the
// end of the file, or a header whose checksum holds, whose number is the
// next one and whose declared length runs past the end. That record was
// never acknowledged; it is cut off and the cut is logged. Anything else —
// a header checksum that fails (a damaged header, or a record of another
// file), a record whose number is not the next (removed, duplicated or
// moved: the writer never writes one), a payload checksum that fails (a
// damaged payload, or a record that does not follow the one before it;
// the final record included: a cut write is a prefix, never a complete
// record with wrong bytes), a payload that does not decode — is
// corruption: Open refuses, naming the offset and the bytes and intact
// records that follow, unless Options.Repair truncates there and logs
// what it dropped. A file header whose checksum fails is refused at
// offset 0 (a repair starts an empty file); one cut short by a crash
// while a new file was created (the header is written and fsynced before
// any record) starts empty.
//
// Older files are still read, with their own rules, and rewritten as
// version 4 (temp file, fsync, rename) before Open accepts a write:
//
// Version 3 ("WBKVAOF3", no file header after the magic) frames records
// as version 4 with no seed (0) and no chain: each payload crc is of the
// payload alone. A record moved within the file is refused by its
// number, but a record of another file is taken wherever its number
// fits.
//
// Version 2 ("WBKVAOF2", a 12-byte header: len, payload crc, header crc
// of bytes 0..8) has the same rules as version 3 but no numbers: a
// record removed, duplicated or moved is found only when its replay does
// not fit (an APPEND to a value of another length).
//
// Version 1 ("WBKVAOF1", an 8-byte header: len, then a CRC of len and the
// payload) does not check its length before it is trusted, so a length
// that runs past the end of the file is taken for a torn tail even when a
// flipped bit put it there, and a bad record followed only by zero bytes
// is torn too. A complete final record whose checksum fails is corruption
// in every version.
const (
	aofMagic   = "WBKVAOF4"
	aofMagicV3 = "WBKVAOF3"
	aofMagicV2 = "WBKVAOF2"
	aofMagicV1 = "WBKVAOF1"
	aofVersion = 4
	fileIDLen  = 16
	// fileHeadLen is version 4's file header: magic, ID, checksum.
	fileHeadLen = len(aofMagic) + fileIDLen + 4
	frameHead   = 16
	frameHead2  = 12
	frameHead1  = 8
	// maxRecord bounds one record: an MSET of large values still fits,
	// and a flipped length byte cannot make the reader allocate gigabytes.
	maxRecord = MaxValueLen + 64<<20
)

const (
	opSet      = 1
	opDel      = 2
	opExpireAt = 3
	opFlushAll = 4
	opAppend   = 6
)

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// Errors of the AOF reader.
var (
	ErrBadMagic = errors.New("kv: not a wirebench AOF (bad magic)")
	ErrCorrupt  = errors.New("kv: corrupt AOF record")
)

// CorruptError is a bad record that is not a torn tail: recovery refuses
// to start unless told to repair, which truncates at Offset.
type CorruptError struct {
	Offset int64  // where the bad record starts
	Reason string // what is wrong with it
	Bytes  int64  // bytes from Offset to the end of the file
	// Intact counts the records with good checksums found after the bad
	// one (a repair drops them too); for version 1 files, whose lengths
	// are unchecked, it is a lower bound and Exact is false.
	Intact int
	Exact  bool
}

func (e *CorruptError) Error() string {
	n := fmt.Sprint(e.Intact)
	if !e.Exact {
		n = "at least " + n
	}
	return fmt.Sprintf("kv: corrupt AOF record at offset %d: %s; %d bytes from there to the end of the file, holding %s intact records after the bad one (start with --aof-repair to truncate the file at offset %d, dropping them)",
		e.Offset, e.Reason, e.Bytes, n, e.Offset)
}

func (e *CorruptError) Unwrap() error { return ErrCorrupt }

// beginFrame reserves a frame header at the end of b.
func beginFrame(b []byte) ([]byte, int) {
	return append(b, make([]byte, frameHead)...), len(b)
}

// chain is where a file's records stand: its seed, and the number and
// header crc of its last record (the seed before the first). Version 3
// has seed 0 and no links: each payload crc is of the payload alone.
type chain struct {
	seed, last, num uint32
	unlinked        bool // version 3
}

// newChain starts the chain of a file with the given ID.
func newChain(id []byte) chain {
	seed := crc32.Checksum(id, castagnoli)
	return chain{seed: seed, last: seed}
}

// newFile returns a new file's header (with a random ID) and its chain.
func newFile() ([]byte, chain) {
	h := make([]byte, fileHeadLen)
	copy(h, aofMagic)
	rand.Read(h[len(aofMagic) : len(aofMagic)+fileIDLen])
	binary.LittleEndian.PutUint32(h[fileHeadLen-4:], crc32.Checksum(h[:fileHeadLen-4], castagnoli))
	return h, newChain(h[len(aofMagic) : len(aofMagic)+fileIDLen])
}

// parseFileHead checks a version 4 file header and returns its chain.
func parseFileHead(h []byte) (chain, bool) {
	if len(h) < fileHeadLen || string(h[:len(aofMagic)]) != aofMagic ||
		crc32.Checksum(h[:fileHeadLen-4], castagnoli) != binary.LittleEndian.Uint32(h[fileHeadLen-4:]) {
		return chain{}, false
	}
	return newChain(h[len(aofMagic) : len(aofMagic)+fileIDLen]), true
}

// endFrame fills the header of the frame starting at start as the next
// record of c.
func endFrame(b []byte, start int, c *chain) []byte {
	binary.LittleEndian.PutUint32(b[start:], uint32(len(b)-start-frameHead))
	c.seal(b[start:])
	return b
}

// seal numbers and checksums the frame at the start of f (its length
// filled) as the next record of c.
func (c *chain) seal(f []byte) {
	n := binary.LittleEndian.Uint32(f)
	payload := f[frameHead : frameHead+n]
	prev := c.last
	if c.unlinked {
		prev = 0
	}
	c.num++
	binary.LittleEndian.PutUint32(f[4:], c.num)
	binary.LittleEndian.PutUint32(f[8:], crc32.Update(prev, castagnoli, payload))
	c.last = crc32.Update(c.seed, castagnoli, f[:12])
	binary.LittleEndian.PutUint32(f[12:], c.last)
}

// reseal makes the whole frames of b (a rewrite's tail, framed for the
// old file) the next records of c: numbers and both checksums again.
func (c *chain) reseal(b []byte) {
	for len(b) >= frameHead {
		c.seal(b)
		b = b[frameHead+int(binary.LittleEndian.Uint32(b)):]
	}
}

// checkHead returns the payload length, record number and payload
// checksum of a frame header of the given version (2, 3 or 4; version 2
// has no number), ok when the header's own checksum holds with seed (0
// before version 4).
func checkHead(h []byte, version int, seed uint32) (n int64, seq uint32, crc uint32, ok bool) {
	if version == 2 {
		if crc32.Checksum(h[:8], castagnoli) != binary.LittleEndian.Uint32(h[8:12]) {
			return 0, 0, 0, false
		}
		return int64(binary.LittleEndian.Uint32(h)), 0, binary.LittleEndian.Uint32(h[4:]), true
	}
	if crc32.Update(seed, castagnoli, h[:12]) != binary.LittleEndian.Uint32(h[12:16]) {
		return 0, 0, 0, false
	}
	return int64(binary.LittleEndian.Uint32(h)), binary.LittleEndian.Uint32(h[4:]), binary.LittleEndian.Uint32(h[8:]), true
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

// appendAppendOp logs APPEND to a key that held total-len(val) bytes.
func appendAppendOp(b []byte, key string, val []byte, total int, exp int64) []byte {
	b = append(b, opAppend)
	b = binary.AppendUvarint(b, uint64(exp))
	b = binary.AppendUvarint(b, uint64(len(key)))
	b = append(b, key...)
	b = binary.AppendUvarint(b, uint64(total))
	b = binary.AppendUvarint(b, uint64(len(val)))
	return append(b, val...)
}

func appendExpireOp(b []byte, key string, exp int64) []byte {
	b = append(b, opExpireAt)
	b = binary.AppendUvarint(b, uint64(exp))
	b = binary.AppendUvarint(b, uint64(len(key)))
	return append(b, key...)
}

// Op is one decoded operation of a record.
type Op struct {
	Code  byte
	Key   []byte // aliases the payload
	Val   []byte // aliases the payload
	Exp   int64
	Total int // APPEND: the value's length after it
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
		case opAppend:
			var exp, total uint64
			if exp, p, err = uvarint(p); err != nil {
				return nil, err
			}
			op.Exp = int64(exp)
			if op.Key, p, err = lenBytes(p, MaxKeyLen); err != nil {
				return nil, err
			}
			if total, p, err = uvarint(p); err != nil {
				return nil, err
			}
			if op.Val, p, err = lenBytes(p, MaxValueLen); err != nil {
				return nil, err
			}
			if total > MaxValueLen || total < uint64(len(op.Val)) {
				return nil, fmt.Errorf("APPEND total %d out of range", total)
			}
			op.Total = int(total)
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
