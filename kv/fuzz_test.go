package kv

import (
	"bytes"
	"encoding/binary"
	"errors"
	"hash/crc32"
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

// FuzzReadRecords: the AOF reader takes any bytes of either version
// without panicking; it stops at a good-record boundary with nil, a torn
// tail or a CorruptError naming that offset; a version 2 torn tail is
// only ever an incomplete final record; and every record it accepted
// re-encodes to bytes that read back.
func FuzzReadRecords(f *testing.F) {
	payloads := [][]byte{
		appendSetOp(nil, "key", []byte("value"), 1700000000000),
		appendExpireOp(appendDelOp(nil, "key"), "other", 0),
		{opFlushAll},
		appendAppendOp(nil, "key", []byte("tail"), 9, 0),
	}
	var v2, v1 []byte
	for _, p := range payloads {
		var start int
		v2, start = beginFrame(v2)
		v2 = endFrame(append(v2, p...), start)
		v1 = frameV1(v1, p)
	}
	for _, b := range [][]byte{v1, v2} {
		isV1 := len(b) == len(v1)
		f.Add(isV1, b)
		f.Add(isV1, b[:len(b)-3])
		f.Add(isV1, append(append([]byte{}, b...), make([]byte, 16)...))
		flipped := append([]byte{}, b...)
		flipped[3] ^= 1 // the length's high byte
		f.Add(isV1, flipped)
		flipped = append([]byte{}, b...)
		flipped[len(b)-1] ^= 0x80 // the final record's payload
		f.Add(isV1, flipped)
	}
	f.Fuzz(func(t *testing.T, isV1 bool, data []byte) {
		version := 2
		if isV1 {
			version = 1
		}
		size := int64(len(data))
		var re []byte
		off, err := readRecords(bytes.NewReader(data), version, 0, size, func(ops []Op) error {
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
			re = endFrame(re, s)
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
		if version == 2 && errors.Is(err, errTorn) {
			// Torn: the header is cut, or it holds and runs past the end.
			if rest := data[off:]; len(rest) >= frameHead {
				n, _, ok := checkHead(rest)
				if !ok || off+frameHead+n <= size {
					t.Fatalf("torn at %d with a complete or damaged header (ok %v, len %d, size %d)", off, ok, n, size)
				}
			}
		}
		off2, err2 := readRecords(bytes.NewReader(re), 2, 0, int64(len(re)), func([]Op) error { return nil })
		if err2 != nil || off2 != int64(len(re)) {
			t.Fatalf("re-encoded records do not read back: %v at %d of %d", err2, off2, len(re))
		}
	})
}
