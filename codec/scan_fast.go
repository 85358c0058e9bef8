package codec

import (
	"encoding/binary"
	"math"
	"math/bits"
	"unicode/utf8"
)

// The scanners run in two passes only on a refused body. validJSON and
// validMsgpack answer one question, "does the exact scanner accept b?", in a
// single tight pass: no error values, fixed stacks, 8 bytes of a string at
// a time. They accept exactly what explainJSON and explainMsgpack accept
// (FuzzFastScanners checks both ways) under limits they can hold on their
// fixed stacks; on any other body, or other limits, the exact scanner runs
// and says why. A well-formed body, the server's usual case, costs one pass:
// the scan was 9-20% of the libraries' own decode before this split.

// maxFastDepth is the deepest nesting the fast scanners hold on their
// stack-allocated stacks; deeper limits take the exact scanners.
const maxFastDepth = 64

// fastLimits reports whether the fast scanners can apply lim exactly.
func fastLimits(lim Limits) bool {
	return lim.MaxDepth >= 0 && lim.MaxDepth <= maxFastDepth && lim.MaxItems >= 0 && lim.MaxItems <= math.MaxInt32
}

const (
	lsb = 0x0101010101010101
	msb = 0x8080808080808080
)

// validJSON reports whether explainJSON(b, lim) returns nil. It is one
// function, its states joined by goto, so that a token costs no call: the
// call overhead and a return per string were a third of the scan.
func validJSON(b []byte, lim Limits) bool {
	if !fastLimits(lim) {
		return explainJSON(b, lim) == nil
	}
	var count [maxFastDepth]int32 // the commas of each open container
	var obj uint64                // bit d set: open container d is an object
	maxItems := int32(lim.MaxItems)
	depth, top := 0, 0
	n := len(b)
	i := 0
	var (
		c    byte
		x, m uint64
		j, k int
	)

value: // a value starts at i, maybe after space
	if i < n && b[i] <= ' ' {
		i = skipSpace(b, i)
	}
	if i >= n {
		return false
	}
	c = b[i]
	switch c {
	case '"':
		i++
		goto str
	case '{', '[':
		if depth >= lim.MaxDepth {
			return false
		}
		i++
		if i < n && b[i] <= ' ' {
			i = skipSpace(b, i)
		}
		if i < n && b[i] == c+2 { // '{'+2 is '}', '['+2 is ']'
			i++
			goto after // an empty container is a complete value
		}
		count[depth] = 0
		if c == '[' {
			obj &^= 1 << depth
			depth++
			goto value
		}
		obj |= 1 << depth
		depth++
		goto key
	case 't':
		if !hasLiteral(b, i, "true") {
			return false
		}
		i += 4
		goto after
	case 'f':
		if !hasLiteral(b, i, "false") {
			return false
		}
		i += 5
		goto after
	case 'n':
		if !hasLiteral(b, i, "null") {
			return false
		}
		i += 4
		goto after
	}
	// A number: -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?
	if c == '-' {
		if i++; i >= n {
			return false
		}
		c = b[i]
	}
	switch {
	case c == '0':
		i++
	case c-'1' < 9:
		i++
		for i < n && b[i]-'0' < 10 {
			i++
		}
	default:
		return false
	}
	if i < n && b[i] == '.' {
		i++
		for j = i; i < n && b[i]-'0' < 10; i++ {
		}
		if i == j {
			return false
		}
	}
	if i < n && b[i]|0x20 == 'e' {
		if i++; i < n && (b[i] == '+' || b[i] == '-') {
			i++
		}
		for j = i; i < n && b[i]-'0' < 10; i++ {
		}
		if i == j {
			return false
		}
	}
	goto after

key: // `"key" :` starts at i
	if i >= n || b[i] != '"' {
		return false
	}
	i++
keyStr: // inside a key, at i: the value string's loop below, for a key
	for i+8 <= n {
		x = binary.LittleEndian.Uint64(b[i:])
		if m = special8(x); m != 0 {
			k = bits.TrailingZeros64(m)
			i += k >> 3
			if c = byte(x >> (k &^ 7)); c == '"' {
				goto keyEnd
			}
			goto keySpecial
		}
		i += 8
	}
	if i >= n {
		return false
	}
	if c = b[i]; c == '"' {
		goto keyEnd
	}
keySpecial:
	if i = stringSpecial(b, i, c); i < 0 {
		return false
	}
	goto keyStr
keyEnd:
	i++
	if i < n && b[i] <= ' ' {
		i = skipSpace(b, i)
	}
	if i >= n || b[i] != ':' {
		return false
	}
	i++
	goto value

str: // inside a string value, at i; eight bytes at a time
	for i+8 <= n {
		x = binary.LittleEndian.Uint64(b[i:])
		if m = special8(x); m != 0 {
			// The byte is taken from x, not loaded again: the string's
			// end is on the scan's critical path.
			k = bits.TrailingZeros64(m)
			i += k >> 3
			if c = byte(x >> (k &^ 7)); c == '"' {
				i++
				goto after
			}
			goto strSpecial
		}
		i += 8
	}
	if i >= n {
		return false
	}
	if c = b[i]; c == '"' {
		i++
		goto after
	}
strSpecial:
	if i = stringSpecial(b, i, c); i < 0 {
		return false
	}
	goto str

after: // a value ended before i: close containers, or go on to the next element
	if i < n && b[i] <= ' ' {
		i = skipSpace(b, i)
	}
	if depth == 0 {
		return i == n
	}
	if i >= n {
		return false
	}
	top = depth - 1
	switch b[i] {
	case ',':
		if count[top]++; count[top] >= maxItems {
			return false
		}
		i++
		if obj>>top&1 == 0 {
			goto value
		}
		if i < n && b[i] <= ' ' {
			i = skipSpace(b, i)
		}
		goto key
	case '}':
		if obj>>top&1 == 0 {
			return false
		}
	case ']':
		if obj>>top&1 != 0 {
			return false
		}
	default:
		return false
	}
	depth--
	i++
	goto after
}

// special8 flags, in the top bit of each byte, the bytes of x a string
// scan must stop at: a quote, a backslash, a control character, a byte
// that is not ASCII. Subtracting lsb from x^'"'... sets a byte's top bit
// where that byte is a quote, or where a borrow came out of a lower byte
// (which only a flagged byte starts), or where x's byte is not ASCII
// (except 0xa2 and 0xa3, which the backslash term flags); likewise for a
// backslash (except 0xdc and 0xdd, which the quote term flags), and x-0x20
// for a control character. So every such byte is flagged, and the lowest
// flagged byte is always a real one.
func special8(x uint64) uint64 {
	return ((x ^ lsb*'"' - lsb) | (x ^ lsb*'\\' - lsb) | (x - lsb*0x20)) & msb
}

// stringSpecial steps over b[i] == c inside a string, which is not its
// closing quote: an escape, or a character that is not ASCII (or, in the
// last bytes, that is). It returns -1 where scanString refuses it.
func stringSpecial(b []byte, i int, c byte) int {
	switch {
	case c == '\\':
		return fastEscape(b, i)
	case c < 0x20:
		return -1
	case c < utf8.RuneSelf:
		return i + 1
	}
	r, size := utf8.DecodeRune(b[i:])
	if r == utf8.RuneError && size == 1 {
		return -1
	}
	return i + size
}

// fastEscape returns the offset after the escape at b[i] == '\\', or -1
// where scanString refuses it (a bad escape, an unpaired surrogate).
func fastEscape(b []byte, i int) int {
	if i+1 >= len(b) {
		return -1
	}
	switch b[i+1] {
	case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
		return i + 2
	case 'u':
		r, ok := hex4(b, i+2)
		if !ok {
			return -1
		}
		i += 6
		switch {
		case r >= 0xdc00 && r <= 0xdfff:
			return -1
		case r >= 0xd800 && r <= 0xdbff:
			if lo, ok := hex4(b, i+2); !ok || b[i] != '\\' || b[i+1] != 'u' || lo < 0xdc00 || lo > 0xdfff {
				return -1
			}
			i += 6
		}
		return i
	}
	return -1
}

// mpType is what a msgpack type byte says of the value it starts.
type mpType struct {
	kind uint8 // mpScalar, mpArray, mpMap, mpBytes, mpText, mpArrayN, mpMapN, or 0: invalid
	// n is, by kind: the payload's size (scalar), the element count (fix
	// array, fix map), or the size of the length field that follows.
	n     uint8
	extra uint8 // bytes between the length field and the payload (ext's type)
}

const (
	mpInvalid = iota
	mpScalar  // a payload of n bytes
	mpFixText // a fixstr: n bytes of UTF-8
	mpArray   // a fixarray of n elements
	mpMap     // a fixmap of n pairs
	mpBytes   // an n-byte length, then extra + length bytes
	mpText    // an n-byte length, then that many bytes of UTF-8
	mpArrayN  // an n-byte element count
	mpMapN    // an n-byte pair count
)

// mpTypes is scanMsgpack's switch as a table, by type byte.
var mpTypes = func() (t [256]mpType) {
	for c := range 256 {
		var e mpType
		switch {
		case c <= 0x7f || c >= 0xe0:
			e = mpType{kind: mpScalar}
		case c&0xf0 == 0x80:
			e = mpType{kind: mpMap, n: uint8(c & 0x0f)}
		case c&0xf0 == 0x90:
			e = mpType{kind: mpArray, n: uint8(c & 0x0f)}
		case c&0xe0 == 0xa0:
			e = mpType{kind: mpFixText, n: uint8(c & 0x1f)}
		case c == 0xc0, c == 0xc2, c == 0xc3:
			e = mpType{kind: mpScalar}
		case c >= 0xc4 && c <= 0xc6:
			e = mpType{kind: mpBytes, n: 1 << (c - 0xc4)}
		case c >= 0xc7 && c <= 0xc9:
			e = mpType{kind: mpBytes, n: 1 << (c - 0xc7), extra: 1}
		case c == 0xca:
			e = mpType{kind: mpScalar, n: 4}
		case c == 0xcb:
			e = mpType{kind: mpScalar, n: 8}
		case c >= 0xcc && c <= 0xcf:
			e = mpType{kind: mpScalar, n: 1 << (c - 0xcc)}
		case c >= 0xd0 && c <= 0xd3:
			e = mpType{kind: mpScalar, n: 1 << (c - 0xd0)}
		case c >= 0xd4 && c <= 0xd8:
			e = mpType{kind: mpScalar, n: 1 + 1<<(c-0xd4)}
		case c >= 0xd9 && c <= 0xdb:
			e = mpType{kind: mpText, n: 1 << (c - 0xd9)}
		case c == 0xdc, c == 0xdd:
			e = mpType{kind: mpArrayN, n: 2 << (c - 0xdc)}
		case c == 0xde, c == 0xdf:
			e = mpType{kind: mpMapN, n: 2 << (c - 0xde)}
		}
		t[c] = e
	}
	return t
}()

// validMsgpack reports whether explainMsgpack(b, lim) returns nil.
func validMsgpack(b []byte, lim Limits) bool {
	if !fastLimits(lim) {
		return explainMsgpack(b, lim) == nil
	}
	// cur is the number of values still to read in the innermost open
	// container (the top level, which holds one value, at first), kept
	// in a register; left[k] keeps the k-th's while a deeper one is read.
	var left [maxFastDepth + 1]int
	cur := 1
	top := 0
	i := 0
	for {
		for cur == 0 {
			if top == 0 {
				return i == len(b)
			}
			top--
			cur = left[top]
		}
		if i >= len(b) {
			return false
		}
		t := mpTypes[b[i]]
		i++
		cur--
		var count int // a container's elements, or pairs
		pairs := false
		switch t.kind {
		case mpScalar:
			if len(b)-i < int(t.n) {
				return false
			}
			i += int(t.n)
			continue
		case mpFixText:
			n := int(t.n)
			if len(b)-i < n {
				return false
			}
			// A short key or value, msgpack's usual string: ASCII if no
			// top bit is set in its bytes of the word at i.
			if n > 8 || len(b)-i < 8 || binary.LittleEndian.Uint64(b[i:])&msb&(1<<(8*n)-1) != 0 {
				if !validText(b[i : i+n]) {
					return false
				}
			}
			i += n
			continue
		case mpArray:
			count = int(t.n)
		case mpMap:
			count, pairs = int(t.n), true
		case mpBytes, mpText, mpArrayN, mpMapN:
			var n uint64
			switch t.n {
			case 1:
				if i >= len(b) {
					return false
				}
				n = uint64(b[i])
			case 2:
				if len(b)-i < 2 {
					return false
				}
				n = uint64(binary.BigEndian.Uint16(b[i:]))
			default:
				if len(b)-i < 4 {
					return false
				}
				n = uint64(binary.BigEndian.Uint32(b[i:]))
			}
			i += int(t.n)
			if n > uint64(len(b)) { // also keeps the int conversions exact
				return false
			}
			switch t.kind {
			case mpBytes:
				p := int(n) + int(t.extra)
				if len(b)-i < p {
					return false
				}
				i += p
				continue
			case mpText:
				p := int(n)
				if len(b)-i < p || !validText(b[i:i+p]) {
					return false
				}
				i += p
				continue
			}
			count, pairs = int(n), t.kind == mpMapN
		default:
			return false
		}
		// A container: the (top+1)-th open one.
		values := count
		if pairs {
			values *= 2
		}
		if top+1 > lim.MaxDepth || count > lim.MaxItems || values > len(b)-i {
			return false
		}
		if values > 0 {
			left[top] = cur
			top++
			cur = values
		}
	}
}

// validText is utf8.Valid with the short ASCII string, msgpack's usual key
// and value, checked in line.
func validText(s []byte) bool {
	for len(s) >= 8 {
		if binary.LittleEndian.Uint64(s)&msb != 0 {
			return utf8.Valid(s)
		}
		s = s[8:]
	}
	for _, c := range s {
		if c >= utf8.RuneSelf {
			return utf8.Valid(s)
		}
	}
	return true
}
