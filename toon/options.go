package toon

import (
	"fmt"
	"strings"
)

// Delimiter separates inline array values and table cells (spec §11).
// The zero value means Comma.
type Delimiter byte

// The three delimiters TOON defines.
const (
	Comma Delimiter = ','
	Tab   Delimiter = '\t'
	Pipe  Delimiter = '|'
)

// String returns the name used on command lines: "comma", "tab" or "pipe".
func (d Delimiter) String() string {
	switch d.orDefault() {
	case Tab:
		return "tab"
	case Pipe:
		return "pipe"
	case Comma:
		return "comma"
	}
	return fmt.Sprintf("Delimiter(%q)", byte(d))
}

func (d Delimiter) orDefault() Delimiter {
	if d == 0 {
		return Comma
	}
	return d
}

func (d Delimiter) valid() bool { return d == 0 || d == Comma || d == Tab || d == Pipe }

// ParseDelimiter accepts a delimiter's name or character: "comma" or ",",
// "tab" or a tab character, "pipe" or "|".
func ParseDelimiter(s string) (Delimiter, error) {
	switch strings.ToLower(s) {
	case ",", "comma":
		return Comma, nil
	case "\t", "tab", `\t`:
		return Tab, nil
	case "|", "pipe":
		return Pipe, nil
	}
	return 0, fmt.Errorf("toon: unknown delimiter %q (want comma, tab or pipe)", s)
}

// DefaultMaxDepth bounds nesting when MaxDepth is zero. It is deep enough for
// any document a person writes and shallow enough that recursion stays far
// below the goroutine stack limit.
const DefaultMaxDepth = 1000

// MarshalOptions configures encoding. The zero value is the spec's default:
// two-space indentation and comma as the document delimiter.
type MarshalOptions struct {
	// Indent is the number of spaces per nesting level; 0 means 2.
	Indent int
	// Delimiter is the document delimiter (spec §11.1): it separates inline
	// array values and table cells and decides which strings need quotes.
	Delimiter Delimiter
	// MaxDepth bounds nesting (and so stops cyclic pointers); 0 means
	// DefaultMaxDepth.
	MaxDepth int
}

func (o MarshalOptions) normalized() (MarshalOptions, error) {
	if o.Indent == 0 {
		o.Indent = 2
	}
	if o.Indent < 0 {
		return o, fmt.Errorf("toon: negative indent %d", o.Indent)
	}
	if !o.Delimiter.valid() {
		return o, fmt.Errorf("toon: invalid delimiter %q", byte(o.Delimiter))
	}
	o.Delimiter = o.Delimiter.orDefault()
	if o.MaxDepth <= 0 {
		o.MaxDepth = DefaultMaxDepth
	}
	return o, nil
}

// UnmarshalOptions configures decoding. The zero value is the spec's
// default: two-space indentation and strict mode.
type UnmarshalOptions struct {
	// Indent is the number of spaces per nesting level; 0 means 2.
	Indent int
	// Lenient turns strict mode (spec §14) off; see the package
	// documentation for what it relaxes.
	Lenient bool
	// MaxDepth bounds nesting of objects and arrays; 0 means
	// DefaultMaxDepth.
	MaxDepth int
}

func (o UnmarshalOptions) normalized() (UnmarshalOptions, error) {
	if o.Indent == 0 {
		o.Indent = 2
	}
	if o.Indent < 0 {
		return o, fmt.Errorf("toon: negative indent %d", o.Indent)
	}
	if o.MaxDepth <= 0 {
		o.MaxDepth = DefaultMaxDepth
	}
	return o, nil
}
