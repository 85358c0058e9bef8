package toon

import (
	"errors"
	"fmt"
	"reflect"
	"strings"
	"sync"
	"unsafe"
)

// Unmarshal decodes the TOON document data into the value pointed to by v,
// with the default options (strict, two-space indentation).
func Unmarshal(data []byte, v any) error { return UnmarshalOptions{}.Unmarshal(data, v) }

// Unmarshal decodes the TOON document data into the value pointed to by v.
// Struct and slice targets are filled directly from the text; an `any`
// target receives generic values (Object, []any, Number, string, bool,
// nil). Decoded strings never alias data: they are cut from copies of it
// made in 4 KiB blocks, so a kept string holds at most one block alive.
func (o UnmarshalOptions) Unmarshal(data []byte, v any) error {
	rv := reflect.ValueOf(v)
	if rv.Kind() != reflect.Pointer || rv.IsNil() {
		return fmt.Errorf("toon: %w: Unmarshal needs a non-nil pointer, got %T", ErrType, v)
	}
	o, err := o.normalized()
	if err != nil {
		return err
	}
	p := parserPool.Get().(*parser)
	defer p.release()
	// The view is only read during the call; p.keep copies what outlives it.
	src := &p.strSrc
	*src = stringSource{s: unsafe.String(unsafe.SliceData(data), len(data))}
	p.reset(src, o, true)
	p.in, p.inBase = src.s, uintptr(unsafe.Pointer(unsafe.SliceData(data)))
	// One check of the whole input is faster than one per line; only a
	// failure needs the per-line check, to report where.
	p.sc.validated = validUTF8(src.s)
	p.arena = nil
	return p.document(decoderFor(rv.Type().Elem()), rv.Elem())
}

// parser decodes the structure of a document (spec §5-§10) into targets,
// mirroring the reference decoder's control flow so that both accept and
// reject the same documents.
type parser struct {
	sc       scanner
	strict   bool
	maxDepth int
	depth    int
	// started counts array spans whose first line has been read: a blank
	// line before any further line inside them is an error (spec §12).
	started int
	cur     line // the last consumed line
	// stable says line views stay valid for the whole decode (in-memory
	// input), so keys can be remembered without copying.
	stable bool
	cells  []string
	tok    token
	// in is the in-memory input (stable mode); arena is where keep copies
	// strings to.
	in     string
	inBase uintptr
	arena  []byte
	seen   []*seenSet // free list
	strSrc stringSource
}

var parserPool = sync.Pool{New: func() any { return new(parser) }}

func (p *parser) reset(src lineSource, o UnmarshalOptions, stable bool) {
	p.sc = scanner{src: src, indent: o.Indent, strict: !o.Lenient}
	p.strict = !o.Lenient
	p.maxDepth = o.MaxDepth
	p.depth, p.started = 0, 0
	p.cur = line{}
	p.arena = nil
	p.stable = stable
}

func (p *parser) release() {
	p.sc = scanner{}
	p.strSrc = stringSource{}
	p.cur = line{}
	p.in, p.inBase, p.arena = "", 0, nil
	clear(p.cells[:cap(p.cells)])
	parserPool.Put(p)
}

// keep returns s, which may be a view into the input or the current
// line, as a string that owns its memory, so decoded values never alias
// the caller's buffer or the stream's line buffers.
//
// Kept strings are copied into an append-only arena of keepBlock bytes: a
// table of short strings costs one allocation per block rather than one
// per cell, only the kept bytes are copied, and a kept string pins at
// most one block. Bytes already handed out are never written again.
func (p *parser) keep(s string) string {
	if s == "" {
		return ""
	}
	ptr := uintptr(unsafe.Pointer(unsafe.StringData(s)))
	if p.stable {
		if ptr < p.inBase || ptr >= p.inBase+uintptr(len(p.in)) {
			return s // already owned (unescaped, canonicalized or kept)
		}
	} else {
		base := uintptr(unsafe.Pointer(unsafe.StringData(p.cur.content)))
		if ptr < base || ptr >= base+uintptr(len(p.cur.content)) {
			return s
		}
	}
	if len(s) > cap(p.arena)-len(p.arena) {
		if len(s) > keepBlock/4 {
			return strings.Clone(s) // big strings get their own allocation
		}
		size := keepBlock
		if p.stable {
			// What is left of the input bounds what can still be kept, so
			// a small document gets a small block.
			size = min(size, max(len(s), len(p.in)-int(ptr-p.inBase)))
		}
		p.arena = make([]byte, 0, size)
	}
	start := len(p.arena)
	p.arena = append(p.arena, s...)
	return unsafe.String(&p.arena[start], len(s))
}

// keepBlock is the size of keep's arena blocks.
const keepBlock = 4096

// keepKey keeps a key that ot will store (maps and generic objects) while
// its line is still current: the value may span further lines.
func (p *parser) keepKey(ot *objTarget, key string) string {
	switch ot.mode {
	case dMap, dIface, dObject, dJSON:
		return p.keep(key)
	}
	return key
}

// prim types the token s found at byte off of l into p.tok. The token
// lives in the parser, not on the stack, because setters are called
// through function values and would make a local escape on every cell.
func (p *parser) prim(s string, l *line, off int) (*token, error) {
	t := &p.tok
	var err error
	if *t, err = parsePrimitive(s); err != nil {
		return nil, p.wrap(l, off, err)
	}
	t.col = l.col(off)
	return t, nil
}

func (p *parser) peek() (*line, error) { return p.sc.peek() }

// next consumes a line, enforcing the blank-line rule of array spans.
func (p *parser) next() error {
	l, _, err := p.sc.next()
	if err != nil {
		return err
	}
	if p.strict && l.blank != 0 && p.started > 0 {
		return errorf(ErrSyntax, l.blank, 0, "blank line inside an array")
	}
	p.cur = l
	return nil
}

func (p *parser) enter(l *line) error {
	p.depth++
	if p.depth > p.maxDepth {
		return errorf(ErrDepth, l.num, l.col(0), "more than %d levels", p.maxDepth)
	}
	return nil
}

func (p *parser) leave() { p.depth-- }

func (p *parser) syntax(l *line, off int, format string, a ...any) error {
	return errorf(ErrSyntax, l.num, l.col(off), format, a...)
}

func (p *parser) wrap(l *line, off int, err error) error {
	var e *Error
	if errors.As(err, &e) {
		return err
	}
	return errorf(ErrSyntax, l.num, l.col(off), "%v", err)
}

func overIndented(l *line, want int) error {
	return errorf(ErrSyntax, l.num, l.col(0), "line is indented to depth %d, expected %d", l.depth, want)
}

// seenSet detects duplicate sibling keys in strict mode.
type seenSet struct {
	keys []string
	m    map[string]struct{}
}

func (p *parser) newSeen() *seenSet {
	if !p.strict {
		return nil
	}
	if n := len(p.seen); n > 0 {
		s := p.seen[n-1]
		p.seen = p.seen[:n-1]
		return s
	}
	return &seenSet{}
}

func (p *parser) freeSeen(s *seenSet) {
	if s == nil {
		return
	}
	clear(s.keys)
	s.keys = s.keys[:0]
	s.m = nil
	p.seen = append(p.seen, s)
}

// add records key, failing if a sibling already has it.
func (p *parser) addSeen(s *seenSet, key string, l *line) error {
	if s == nil {
		return nil
	}
	dup := false
	if s.m != nil {
		_, dup = s.m[key]
	} else {
		for _, k := range s.keys {
			if k == key {
				dup = true
				break
			}
		}
	}
	if dup {
		return errorf(ErrDuplicateKey, l.num, l.col(0), "%q", key)
	}
	if !p.stable {
		key = strings.Clone(key)
	}
	if s.m != nil {
		s.m[key] = struct{}{}
		return nil
	}
	s.keys = append(s.keys, key)
	if len(s.keys) > 16 {
		s.m = make(map[string]struct{}, 32)
		for _, k := range s.keys {
			s.m[k] = struct{}{}
		}
	}
	return nil
}

// header parses content (which starts at byte off of l's content) as an
// array header, turning malformed headers into errors.
func (p *parser) header(l *line, content string, off int) (header, bool, error) {
	h, res, strictErr, err := parseHeader(content)
	if err != nil {
		return h, false, p.syntax(l, off, "%v", err)
	}
	if res == notHeader {
		return h, false, nil
	}
	if p.strict && strictErr != nil {
		return h, false, errorf(ErrDuplicateKey, l.num, l.col(off), "%v", strictErr)
	}
	return h, true, nil
}
