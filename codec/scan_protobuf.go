package codec

import (
	"google.golang.org/protobuf/encoding/protowire"
)

// scanProtobuf bounds the nesting of groups at the top level of a message
// to lim.MaxDepth, iteratively. The library's RecursionLimit counts
// messages it knows, but skips unknown groups recursively with its own
// limit of 10,000; this keeps protobuf to the same depth as every other
// format. Length-delimited fields are opaque here (bytes or a message: the
// library decides, within RecursionLimit).
func scanProtobuf(b []byte, lim Limits) error {
	const format = "protobuf"
	var openBuf [8]protowire.Number // no allocation for the usual body
	open := openBuf[:0]             // group field numbers, innermost last
	for i := 0; i < len(b); {
		num, typ, n := protowire.ConsumeTag(b[i:])
		if n < 0 {
			return scanError(format, ErrSyntax, i, "%v", protowire.ParseError(n))
		}
		at := i
		i += n
		switch typ {
		case protowire.StartGroupType:
			if len(open) >= lim.MaxDepth {
				return scanError(format, ErrDepth, at, "more than %d levels of groups", lim.MaxDepth)
			}
			open = append(open, num)
			continue
		case protowire.EndGroupType:
			if len(open) == 0 || open[len(open)-1] != num {
				return scanError(format, ErrSyntax, at, "end of group %d without its start", num)
			}
			open = open[:len(open)-1]
			continue
		}
		n = protowire.ConsumeFieldValue(num, typ, b[i:])
		if n < 0 {
			return scanError(format, ErrSyntax, at, "field %d: %v", num, protowire.ParseError(n))
		}
		i += n
	}
	if len(open) > 0 {
		return scanError(format, ErrSyntax, len(b), "group %d not ended", open[len(open)-1])
	}
	return nil
}
