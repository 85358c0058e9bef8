package kv

import (
	"bytes"
	"encoding/binary"
	"errors"
	"hash/crc32"
	"slices"
	"testing"
)

// frameV1 frames payload as version 1 did: len, then a CRC of len and
// the payload.
func frameV1(b, payload []byte) []byte {
	var h [frameHead1]byte
	binary.LittleEndian.PutUint32(h[:], uint32(len(payload)))
	crc := crc32.Update(crc32.Update(0, castagnoli, h[:4]), castagnoli, payload)
	binary.LittleEndian.PutUint32(h[4:], crc)
	return append(append(b, h[:]...), payload...)
}

// frameV2 frames payload as version 2 did: len, payload crc, then a crc
// of those 8 bytes.
func frameV2(b, payload []byte) []byte {
	var h [frameHead2]byte
	binary.LittleEndian.PutUint32(h[:], uint32(len(payload)))
	binary.LittleEndian.PutUint32(h[4:], crc32.Checksum(payload, castagnoli))
	binary.LittleEndian.PutUint32(h[8:], crc32.Checksum(h[:8], castagnoli))
	return append(append(b, h[:]...), payload...)
}

// FuzzReadRecords: the AOF reader takes any bytes of any version without
// panicking; it stops at a good-record boundary with nil, a torn tail or
// a CorruptError naming that offset; a version 2 to 4 torn tail is only
// ever an incomplete final record (for versions 3 and 4, the next one in
// order, and for 4 one whose header checks with the file's seed); and
// every record it accepted re-encodes to bytes that read back.
func FuzzReadRecords(f *testing.F) {
	payloads := [][]byte{
		appendSetOp(nil, "key", []byte("value"), 1700000000000),
		appendExpireOp(appendDelOp(nil, "key"), "other", 0),
		{opFlushAll},
		appendAppendOp(nil, "key", []byte("tail"), 9, 0),
	}
	var v4, v3, v2, v1 []byte
	var ends4 []int
	c4, c3 := fuzzChain(), chain{unlinked: true}
	for _, p := range payloads {
		var start int
		v4, start = beginFrame(v4)
		v4 = endFrame(append(v4, p...), start, &c4)
		ends4 = append(ends4, len(v4))
		v3, start = beginFrame(v3)
		v3 = endFrame(append(v3, p...), start, &c3)
		v2 = frameV2(v2, p)
		v1 = frameV1(v1, p)
	}
	// Another file's records (another ID), for splices.
	var w4 []byte
	cw := newChain([]byte("another file's ID"))
	for _, p := range payloads {
		var start int
		w4, start = beginFrame(w4)
		w4 = endFrame(append(w4, p...), start, &cw)
	}
	for version, b := range map[uint8][]byte{1: v1, 2: v2, 3: v3, 4: v4} {
		f.Add(version, b)
		f.Add(version, b[:len(b)-3])
		f.Add(version, append(append([]byte{}, b...), make([]byte, 16)...))
		flipped := append([]byte{}, b...)
		flipped[3] ^= 1 // the length's high byte
		f.Add(version, flipped)
		flipped = append([]byte{}, b...)
		flipped[len(b)-1] ^= 0x80 // the final record's payload
		f.Add(version, flipped)
	}
	// Version 4: records 2 and 3 swapped, record 2 dropped, record 1
	// repeated at the end, another file's record 2 in place of record 2,
	// another file's tail from record 2 on.
	f.Add(uint8(4), slices.Concat(v4[:ends4[0]], v4[ends4[1]:ends4[2]], v4[ends4[0]:ends4[1]], v4[ends4[2]:]))
	f.Add(uint8(4), slices.Concat(v4[:ends4[0]], v4[ends4[1]:]))
	f.Add(uint8(4), slices.Concat(v4, v4[:ends4[0]]))
	f.Add(uint8(4), slices.Concat(v4[:ends4[0]], w4[ends4[0]:ends4[1]], v4[ends4[1]:]))
	f.Add(uint8(4), slices.Concat(v4[:ends4[0]], w4[ends4[0]:]))
	f.Fuzz(func(t *testing.T, v uint8, data []byte) {
		version := (int(v)+3)%4 + 1 // 1 to 4 as seeded; 0 is 4
		size := int64(len(data))
		var re []byte
		in := chain{}
		if version == 4 {
			in = fuzzChain()
		}
		reCh := fuzzChain()
		off, err := readRecords(bytes.NewReader(data), version, 0, size, &in, func(ops []Op) error {
			var s int
			re, s = beginFrame(re)
			for _, op := range ops {
				switch op.Code {
				case opSet:
					re = appendSetOp(re, string(op.Key), op.Val, op.Exp)
				case opDel:
					re = appendDelOp(re, string(op.Key))
				case opExpireAt:
					re = appendExpireOp(re, string(op.Key), op.Exp)
				case opFlushAll:
					re = append(re, opFlushAll)
				case opMeta:
					re = AppendMetaOp(re, op.Val)
				case opAppend:
					re = appendAppendOp(re, string(op.Key), op.Val, op.Total, op.Exp)
				}
			}
			re = endFrame(re, s, &reCh)
			return nil
		})
		var ce *CorruptError
		if err != nil && !errors.Is(err, errTorn) && !errors.As(err, &ce) {
			t.Fatalf("unexpected error kind: %v", err)
		}
		if off < 0 || off > size {
			t.Fatalf("offset %d outside 0..%d", off, size)
		}
		if ce != nil && (ce.Offset != off || ce.Bytes != size-off) {
			t.Fatalf("CorruptError at %d (%d bytes), returned offset %d of %d", ce.Offset, ce.Bytes, off, size)
		}
		if hl := headLen(version); version >= 2 && errors.Is(err, errTorn) {
			// Torn: the header is cut, or it holds (with the file's seed,
			// numbered next, for versions 3 and 4) and runs past the end.
			if rest := data[off:]; int64(len(rest)) >= hl {
				n, seq, _, ok := checkHead(rest, version, in.seed)
				if !ok || off+hl+n <= size || (version >= 3 && seq != reCh.num+1) {
					t.Fatalf("torn at %d with a complete, damaged or misplaced header (ok %v, len %d, number %d after %d, size %d)", off, ok, n, seq, reCh.num, size)
				}
			}
		}
		back := fuzzChain()
		off2, err2 := readRecords(bytes.NewReader(re), aofVersion, 0, int64(len(re)), &back, func([]Op) error { return nil })
		if err2 != nil || off2 != int64(len(re)) {
			t.Fatalf("re-encoded records do not read back: %v at %d of %d", err2, off2, len(re))
		}
	})
}

// fuzzChain is the chain of the fuzzed version 4 file.
func fuzzChain() chain { return newChain([]byte("fuzzed file's ID")) }
