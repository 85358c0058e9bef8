package codec

import (
	"encoding/binary"
	"unicode/utf8"
)

// scanMsgpack checks that b is exactly one well-formed MessagePack value
// within lim: validMsgpack's one pass, and explainMsgpack's for the error
// of a refused body.
func scanMsgpack(b []byte, lim Limits) error {
	if validMsgpack(b, lim) {
		return nil
	}
	return explainMsgpack(b, lim)
}

// explainMsgpack is scanMsgpack's exact pass, without recursion: a stack
// of "items left" counters, one per open array or map. Strings must be UTF-8 (the spec says str is UTF-8, and
// every other format refuses ill-formed text). Every declared length is
// checked against the bytes left, so no length can make a decoder
// preallocate more than the body's size.
func explainMsgpack(b []byte, lim Limits) error {
	const format = "msgpack"
	// left[k] is the number of values still to read in the k-th open
	// container; left[0] is the top level, which holds one value.
	var leftBuf [16]int // no allocation for the usual shallow body
	left := append(leftBuf[:0], 1)
	i := 0
	for {
		for left[len(left)-1] == 0 {
			if len(left) == 1 {
				if i != len(b) {
					return scanError(format, ErrTrailing, i, "%d bytes after the value", len(b)-i)
				}
				return nil
			}
			left = left[:len(left)-1]
		}
		if i >= len(b) {
			return scanError(format, ErrSyntax, i, "truncated: %d more values expected", left[len(left)-1])
		}
		at := i
		c := b[i]
		i++
		left[len(left)-1]--
		items, pairs := -1, false // a container's element count, -1 for a scalar
		payload := 0              // bytes of a scalar's payload after its header
		text := false             // payload must be UTF-8
		var (
			lenSize int // size of a big-endian length field after c
			extra   int // bytes between the length field and the payload (ext type)
		)
		switch {
		case c <= 0x7f || c >= 0xe0: // positive and negative fixint
		case c&0xf0 == 0x80: // fixmap
			items, pairs = int(c&0x0f), true
		case c&0xf0 == 0x90: // fixarray
			items = int(c & 0x0f)
		case c&0xe0 == 0xa0: // fixstr
			payload, text = int(c&0x1f), true
		default:
			switch c {
			case 0xc0, 0xc2, 0xc3: // nil, false, true
			case 0xc4, 0xc5, 0xc6: // bin 8/16/32
				lenSize = 1 << (c - 0xc4)
			case 0xc7, 0xc8, 0xc9: // ext 8/16/32
				lenSize, extra = 1<<(c-0xc7), 1
			case 0xca:
				payload = 4
			case 0xcb:
				payload = 8
			case 0xcc, 0xcd, 0xce, 0xcf: // uint 8..64
				payload = 1 << (c - 0xcc)
			case 0xd0, 0xd1, 0xd2, 0xd3: // int 8..64
				payload = 1 << (c - 0xd0)
			case 0xd4, 0xd5, 0xd6, 0xd7, 0xd8: // fixext 1..16, plus the type byte
				payload = 1 + 1<<(c-0xd4)
			case 0xd9, 0xda, 0xdb: // str 8/16/32
				lenSize, text = 1<<(c-0xd9), true
			case 0xdc, 0xdd: // array 16/32
				lenSize, items = 2<<(c-0xdc), 0
			case 0xde, 0xdf: // map 16/32
				lenSize, items, pairs = 2<<(c-0xde), 0, true
			default: // 0xc1 is never used
				return scanError(format, ErrSyntax, at, "invalid type byte 0x%02x", c)
			}
		}
		if lenSize > 0 {
			if len(b)-i < lenSize {
				return scanError(format, ErrSyntax, at, "truncated length")
			}
			var n uint64
			switch lenSize {
			case 1:
				n = uint64(b[i])
			case 2:
				n = uint64(binary.BigEndian.Uint16(b[i:]))
			case 4:
				n = uint64(binary.BigEndian.Uint32(b[i:]))
			}
			i += lenSize
			if n > uint64(len(b)) { // also keeps the int conversion below exact
				return scanError(format, ErrTooMany, at, "length %d exceeds the %d-byte body", n, len(b))
			}
			if items >= 0 {
				items = int(n)
			} else {
				payload = int(n) + extra
			}
		}
		if items < 0 {
			if len(b)-i < payload {
				return scanError(format, ErrSyntax, at, "truncated: %d-byte payload, %d bytes left", payload, len(b)-i)
			}
			if text && !utf8.Valid(b[i:i+payload]) {
				return scanError(format, ErrSyntax, at, "string is not valid UTF-8")
			}
			i += payload
			continue
		}
		if len(left) > lim.MaxDepth {
			return scanError(format, ErrDepth, at, "more than %d levels", lim.MaxDepth)
		}
		if items > lim.MaxItems {
			return scanError(format, ErrTooMany, at, "%d elements, limit %d", items, lim.MaxItems)
		}
		values := items
		if pairs {
			values *= 2
		}
		if values > len(b)-i { // every value takes at least one byte
			return scanError(format, ErrTooMany, at, "%d values declared, %d bytes left", values, len(b)-i)
		}
		if values > 0 {
			left = append(left, values)
		}
	}
}
