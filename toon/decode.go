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
	p.block, p.blockOff = "", 0
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
	cur     line   // the last consumed line
	curCopy string // lazily made copy of cur.content, see keep
	// stable says line views stay valid for the whole decode (in-memory
	// input), so keys can be remembered without copying.
	stable bool
	cells  []string
	tok    token
	// in is the in-memory input (stable mode) and block the part of it
	// copied most recently by keep, starting at byte blockOff.
	in       string
	inBase   uintptr
	block    string
	blockOff int
	seen     []*seenSet // free list
	strSrc   stringSource
}

var parserPool = sync.Pool{New: func() any { return new(parser) }}

func (p *parser) reset(src lineSource, o UnmarshalOptions, stable bool) {
	p.sc = scanner{src: src, indent: o.Indent, strict: !o.Lenient}
	p.strict = !o.Lenient
	p.maxDepth = o.MaxDepth
	p.depth, p.started = 0, 0
	p.cur, p.curCopy = line{}, ""
	p.stable = stable
}

func (p *parser) release() {
	p.sc = scanner{}
	p.strSrc = stringSource{}
	p.cur, p.curCopy = line{}, ""
	p.in, p.inBase, p.block = "", 0, ""
	clear(p.cells[:cap(p.cells)])
	parserPool.Put(p)
}

// keep returns s, which may be a view into the input, as a string that
// owns its memory, so decoded values never alias the caller's buffer.
//
// In-memory input is copied in blocks of keepBlock bytes on first use, and
// strings are cut from the copy: a table of short strings costs one
// allocation per block rather than one per cell, and a kept string pins at
// most one block. Streamed input has no stable buffer, so each line is
// copied, once, when its first string is kept.
func (p *parser) keep(s string) string {
	if s == "" {
		return ""
	}
	ptr := uintptr(unsafe.Pointer(unsafe.StringData(s)))
	if p.stable {
		off := int(ptr - p.inBase)
		if ptr < p.inBase || off >= len(p.in) {
			return s // already owned (unescaped or canonicalized)
		}
		if off < p.blockOff || off+len(s) > p.blockOff+len(p.block) {
			end := min(len(p.in), max(off+len(s), off+keepBlock))
			p.block, p.blockOff = strings.Clone(p.in[off:end]), off
		}
		return p.block[off-p.blockOff : off-p.blockOff+len(s)]
	}
	base := uintptr(unsafe.Pointer(unsafe.StringData(p.cur.content)))
	if ptr < base || ptr >= base+uintptr(len(p.cur.content)) {
		return s
	}
	if p.curCopy == "" {
		p.curCopy = strings.Clone(p.cur.content)
	}
	off := int(ptr - base)
	return p.curCopy[off : off+len(s)]
}

// keepBlock is the unit in which in-memory input is copied by keep.
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
	p.cur, p.curCopy = l, ""
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

// document decodes a whole document per the root-form rules of spec §5.
func (p *parser) document(d *decoder, v reflect.Value) error {
	first, err := p.peek()
	if err != nil {
		return err
	}
	if first == nil {
		return p.emptyObject(d, v, 0)
	}
	if first.depth != 0 {
		return overIndented(first, 0)
	}
	if trimSpaces(first.content) == "[]" {
		if err := p.next(); err != nil {
			return err
		}
		if err := p.emptyArray(d, v, 1); err != nil {
			return err
		}
		return p.fullyConsumed()
	}
	if isArrayHeaderContent(first.content) {
		h, ok, err := p.header(first, first.content, 0)
		if err != nil {
			return err
		}
		if ok {
			if err := p.next(); err != nil {
				return err
			}
			hl := p.cur
			if err := p.arrayFromHeader(&h, 0, d, v, &hl); err != nil {
				return err
			}
			return p.fullyConsumed()
		}
	}
	if err := p.next(); err != nil {
		return err
	}
	fl := p.cur
	following, err := p.peek()
	if err != nil {
		return err
	}
	kv := isKeyValue(fl.content)
	if following == nil && !kv {
		t, err := p.prim(fl.content, &fl, 0)
		if err != nil {
			return err
		}
		return p.setScalar(d, v, t)
	}
	if !kv && following.depth == 0 {
		return p.syntax(&fl, 0, "a document with several lines must start with a key-value or array-header line")
	}
	ot, err := p.beginObject(d, v, fl.col(0))
	if err != nil {
		return err
	}
	seen := p.newSeen()
	defer p.freeSeen(seen)
	if err := p.keyValue(&fl, 0, &ot, seen); err != nil {
		return err
	}
	for {
		l, err := p.peek()
		if err != nil {
			return err
		}
		if l == nil {
			break
		}
		if l.depth != 0 {
			return overIndented(l, 0)
		}
		if err := p.next(); err != nil {
			return err
		}
		cl := p.cur
		if err := p.keyValue(&cl, 0, &ot, seen); err != nil {
			return err
		}
	}
	return ot.end(p, 1)
}

func (p *parser) fullyConsumed() error {
	l, err := p.peek()
	if err != nil {
		return err
	}
	if l != nil {
		return p.syntax(l, 0, "unexpected content after the document's root array")
	}
	return nil
}

func (p *parser) emptyObject(d *decoder, v reflect.Value, col int) error {
	ot, err := p.beginObject(d, v, col)
	if err != nil {
		return err
	}
	return ot.end(p, col)
}

func (p *parser) emptyArray(d *decoder, v reflect.Value, col int) error {
	at, err := p.beginArray(d, v, 0, col)
	if err != nil {
		return err
	}
	return at.end(p, col)
}

// keyValue decodes the field on line l (content from byte off) into ot.
// baseDepth is the depth of the field for scope purposes.
func (p *parser) keyValue(l *line, baseDepth int, ot *objTarget, seen *seenSet) error {
	return p.keyValueAt(l, l.content, 0, baseDepth, ot, seen)
}

func (p *parser) keyValueAt(l *line, content string, off, baseDepth int, ot *objTarget, seen *seenSet) error {
	h, ok, err := p.header(l, content, off)
	if err != nil {
		return err
	}
	if ok {
		if !h.hasKey {
			if h.keyed {
				return p.syntax(l, off, "a keyless keyed header is only valid at the document root")
			}
			return p.syntax(l, off, "a keyless array header is only valid at the document root or as a list item")
		}
		if err := p.addSeen(seen, h.key, l); err != nil {
			return err
		}
		key := p.keepKey(ot, h.key)
		fd, fv := ot.field(key)
		if err := p.arrayFromHeader(&h, baseDepth, fd, fv, l); err != nil {
			return err
		}
		return ot.commit(p, key, l.col(off))
	}
	key, end, err := parseKey(content, 0)
	if err != nil {
		return p.wrap(l, off, err)
	}
	rest := trimSpaces(content[end:])
	if err := p.addSeen(seen, key, l); err != nil {
		return err
	}
	key = p.keepKey(ot, key)
	fd, fv := ot.field(key)
	switch rest {
	case "":
		next, err := p.peek()
		if err != nil {
			return err
		}
		if next != nil && next.depth > baseDepth {
			if p.strict && next.depth > baseDepth+1 {
				return overIndented(next, baseDepth+1)
			}
			if err := p.enter(l); err != nil {
				return err
			}
			sub, err := p.beginObject(fd, fv, l.col(off))
			if err != nil {
				return err
			}
			if err := p.objectFields(baseDepth+1, &sub); err != nil {
				return err
			}
			if err := sub.end(p, l.col(off)); err != nil {
				return err
			}
			p.leave()
		} else if err := p.emptyObject(fd, fv, l.col(off)); err != nil {
			return err
		}
	case "[]":
		if err := p.emptyArray(fd, fv, l.col(off+end)); err != nil {
			return err
		}
	default:
		voff := off + end
		for voff < off+len(content) && l.content[voff] == ' ' {
			voff++
		}
		t, err := p.prim(rest, l, voff)
		if err != nil {
			return err
		}
		if err := p.setScalar(fd, fv, t); err != nil {
			return err
		}
	}
	return ot.commit(p, key, l.col(off))
}

func (p *parser) objectFields(baseDepth int, ot *objTarget) error {
	seen := p.newSeen()
	defer p.freeSeen(seen)
	depth := -1
	for {
		l, err := p.peek()
		if err != nil {
			return err
		}
		if l == nil || l.depth < baseDepth {
			return nil
		}
		if depth < 0 {
			depth = l.depth
		}
		if l.depth != depth {
			return overIndented(l, depth)
		}
		if err := p.next(); err != nil {
			return err
		}
		cl := p.cur
		if err := p.keyValue(&cl, depth, ot, seen); err != nil {
			return err
		}
	}
}

// contentDepth returns the depth of a scope's first content line.
func (p *parser) contentDepth(baseDepth int) (int, error) {
	first, err := p.peek()
	if err != nil {
		return 0, err
	}
	if first == nil || first.depth <= baseDepth+1 {
		return baseDepth + 1, nil
	}
	if p.strict {
		return 0, overIndented(first, baseDepth+1)
	}
	return first.depth, nil
}

func (p *parser) arrayFromHeader(h *header, baseDepth int, d *decoder, v reflect.Value, hl *line) error {
	if err := p.enter(hl); err != nil {
		return err
	}
	defer p.leave()
	if h.keyed {
		return p.keyed(h, baseDepth, d, v, hl)
	}
	at, err := p.beginArray(d, v, h.length, hl.col(0))
	if err != nil {
		return err
	}
	switch {
	case h.inline != "":
		err = p.inline(h, &at, hl)
	case h.fields != nil:
		err = p.tabular(h, baseDepth, &at, hl)
	default:
		err = p.list(h, baseDepth, &at, hl)
	}
	if err != nil {
		return err
	}
	return at.end(p, hl.col(0))
}

func countError(l *line, want, got int, what string) error {
	return errorf(ErrCount, l.num, 0, "header declares %d %s, found %d", want, what, got)
}

func (p *parser) inline(h *header, at *arrTarget, hl *line) error {
	p.cells = splitDelimited(p.cells, h.inline, h.delim)
	cells := p.cells
	if p.strict && len(cells) != h.length {
		return countError(hl, h.length, len(cells), "values")
	}
	off := strings.LastIndex(hl.content, h.inline)
	for _, c := range cells {
		t, err := p.prim(c, hl, off)
		if err != nil {
			return err
		}
		ed, ev := at.next()
		if err := p.setScalar(ed, ev, t); err != nil {
			return err
		}
		at.commit()
	}
	return nil
}

// spanLine consumes the next line of an array span.
func (p *parser) spanLine(first *bool) error {
	if err := p.next(); err != nil {
		return err
	}
	if *first {
		*first = false
		p.started++
	}
	return nil
}

func (p *parser) endSpan(first bool) {
	if !first {
		p.started--
	}
}

func (p *parser) tabular(h *header, baseDepth int, at *arrTarget, hl *line) error {
	rowDepth, err := p.contentDepth(baseDepth)
	if err != nil {
		return err
	}
	plan := p.rowPlan(h, at)
	count := 0
	first := true
	defer func() { p.endSpan(first) }()
	last := *hl
	for !p.strict || count < h.length {
		l, err := p.peek()
		if err != nil {
			return err
		}
		if l == nil || l.depth <= baseDepth {
			break
		}
		if l.depth != rowDepth {
			return overIndented(l, rowDepth)
		}
		if !isDataRow(l.content, h.delim) {
			break
		}
		if err := p.spanLine(&first); err != nil {
			return err
		}
		last = p.cur
		ed, ev := at.next()
		if plan != nil {
			err = p.planRow(plan, ev, h)
		} else {
			p.cells = splitDelimited(p.cells, p.cur.content, h.delim)
			if len(p.cells) != h.leaves {
				return errorf(ErrCount, p.cur.num, 0, "row has %d cells, header declares %d fields", len(p.cells), h.leaves)
			}
			err = p.row(h.fields, ed, ev)
		}
		if err != nil {
			return err
		}
		at.commit()
		count++
	}
	if p.strict {
		if count != h.length {
			return countError(&last, h.length, count, "rows")
		}
		l, err := p.peek()
		if err != nil {
			return err
		}
		if l != nil && l.depth == rowDepth && !strings.HasPrefix(l.content, "- ") && isDataRow(l.content, h.delim) {
			return errorf(ErrCount, l.num, 0, "header declares %d rows, found more", h.length)
		}
	}
	return nil
}

// cellOffset returns the offset of cell c within the current line.
func (p *parser) cellOffset(c string) int {
	if c == "" {
		return 0
	}
	return int(uintptr(unsafe.Pointer(unsafe.StringData(c))) - uintptr(unsafe.Pointer(unsafe.StringData(p.cur.content))))
}

// row decodes p.cells into an object target following the field tree.
func (p *parser) row(fields []field, d *decoder, v reflect.Value) error {
	i := 0
	return p.rowGroup(fields, d, v, &i)
}

func (p *parser) rowGroup(fields []field, d *decoder, v reflect.Value, i *int) error {
	col := p.cur.col(0)
	ot, err := p.beginObject(d, v, col)
	if err != nil {
		return err
	}
	for _, f := range fields {
		fd, fv := ot.field(f.name)
		if f.children != nil {
			if err := p.rowGroup(f.children, fd, fv, i); err != nil {
				return err
			}
		} else {
			c := p.cells[*i]
			*i++
			t, err := p.prim(c, &p.cur, p.cellOffset(c))
			if err != nil {
				return err
			}
			if err := p.setScalar(fd, fv, t); err != nil {
				return err
			}
		}
		if err := ot.commit(p, f.name, col); err != nil {
			return err
		}
	}
	return ot.end(p, col)
}

// planCell maps one column straight to a struct field.
type planCell struct {
	set ptrSetter // nil: unknown column, skipped
	off uintptr
}

// rowPlan resolves the header's columns to struct fields once per table,
// when the elements are structs and every field is a leaf, so that rows
// are decoded without name lookups or per-cell reflection.
func (p *parser) rowPlan(h *header, at *arrTarget) []planCell {
	if at.mode != dSlice && at.mode != dArray {
		return nil
	}
	return rowPlanFor(h, at.d.elem)
}

func rowPlanFor(h *header, ed *decoder) []planCell {
	if ed.kind != dStruct {
		return nil
	}
	plan := make([]planCell, len(h.fields))
	for i, f := range h.fields {
		if f.children != nil {
			return nil
		}
		if j := ed.si.find(f.name); j >= 0 {
			plan[i] = planCell{ptrSetterFor(ed.fields[j]), fieldOffset(ed.typ, ed.si.fields[j].index)}
		}
	}
	return plan
}

// planRow decodes the current line's cells straight into the struct ev,
// scanning the line once; a row of the wrong width is ErrCount.
func (p *parser) planRow(plan []planCell, ev reflect.Value, h *header) error {
	var base unsafe.Pointer
	if ev.IsValid() { // invalid beyond a Go array's length
		base = ev.Addr().UnsafePointer()
	}
	s := p.cur.content
	stop := stopTable(h.delim)
	n := 0
	for i := 0; i <= len(s); n++ {
		cellStart := i
		tk, next, ok := nextToken(s, i, stop)
		wanted := n < len(plan) && base != nil && plan[n].set != nil
		if !ok {
			// Quotes mid-token, escapes after a closing quote and other
			// rarities: split, then type the cell, the general way.
			var c string
			c, next = nextCell(s, i, h.delim, stop)
			if n < len(plan) { // an invalid cell is an error even if unused
				t, err := p.prim(c, &p.cur, p.cellOffset(c))
				if err != nil {
					return err
				}
				tk = *t
			}
		} else {
			tk.col = p.cur.col(cellStart)
		}
		i = next
		if !wanted {
			continue
		}
		p.tok = tk
		if err := plan[n].set(p, unsafe.Add(base, plan[n].off), &p.tok); err != nil {
			return err
		}
	}
	if n != h.leaves {
		return errorf(ErrCount, p.cur.num, 0, "row has %d cells, header declares %d fields", n, h.leaves)
	}
	return nil
}

func (p *parser) keyed(h *header, baseDepth int, d *decoder, v reflect.Value, hl *line) error {
	entryDepth, err := p.contentDepth(baseDepth)
	if err != nil {
		return err
	}
	ot, err := p.beginObject(d, v, hl.col(0))
	if err != nil {
		return err
	}
	seen := p.newSeen()
	defer p.freeSeen(seen)
	count := 0
	first := true
	defer func() { p.endSpan(first) }()
	last := *hl
	for {
		l, err := p.peek()
		if err != nil {
			return err
		}
		if l == nil || l.depth <= baseDepth {
			break
		}
		if l.depth != entryDepth {
			return overIndented(l, entryDepth)
		}
		if findUnquoted(l.content, ':', 0) < 0 {
			return p.syntax(l, 0, "expected an entry row (key: cells) inside a keyed table")
		}
		if err := p.spanLine(&first); err != nil {
			return err
		}
		last = p.cur
		key, end, err := parseKey(p.cur.content, 0)
		if err != nil {
			return p.wrap(&p.cur, 0, err)
		}
		if err := p.addSeen(seen, key, &p.cur); err != nil {
			return err
		}
		cells := trimSpaces(p.cur.content[end:])
		p.cells = p.cells[:0]
		if cells != "" {
			p.cells = splitDelimited(p.cells, cells, h.delim)
		}
		if len(p.cells) != h.leaves {
			return errorf(ErrCount, p.cur.num, 0, "entry has %d cells, header declares %d fields", len(p.cells), h.leaves)
		}
		fd, fv := ot.field(key)
		if err := p.row(h.fields, fd, fv); err != nil {
			return err
		}
		if err := ot.commit(p, key, p.cur.col(0)); err != nil {
			return err
		}
		count++
	}
	if p.strict && count != h.length {
		return countError(&last, h.length, count, "entries")
	}
	return ot.end(p, hl.col(0))
}

func (p *parser) list(h *header, baseDepth int, at *arrTarget, hl *line) error {
	itemDepth, err := p.contentDepth(baseDepth)
	if err != nil {
		return err
	}
	count := 0
	first := true
	defer func() { p.endSpan(first) }()
	last := *hl
	for !p.strict || count < h.length {
		l, err := p.peek()
		if err != nil {
			return err
		}
		if l == nil || l.depth <= baseDepth {
			break
		}
		if l.depth != itemDepth {
			return overIndented(l, itemDepth)
		}
		if !(strings.HasPrefix(l.content, "- ") || l.content == "-") {
			break
		}
		if err := p.spanLine(&first); err != nil {
			return err
		}
		ed, ev := at.next()
		if err := p.listItem(itemDepth, ed, ev); err != nil {
			return err
		}
		at.commit()
		last = p.cur
		count++
	}
	if p.strict {
		if count != h.length {
			return countError(&last, h.length, count, "items")
		}
		l, err := p.peek()
		if err != nil {
			return err
		}
		if l != nil && l.depth == itemDepth && strings.HasPrefix(l.content, "- ") {
			return errorf(ErrCount, l.num, 0, "header declares %d items, found more", h.length)
		}
	}
	return nil
}

// listItem decodes the item on the line just consumed (spec §9.4, §10).
func (p *parser) listItem(baseDepth int, d *decoder, v reflect.Value) error {
	l := p.cur
	if l.content == "-" {
		return p.emptyObject(d, v, l.col(0))
	}
	off := 2
	for off < len(l.content) && l.content[off] == ' ' {
		off++
	}
	after := l.content[off:]
	switch trimSpaces(after) {
	case "":
		return p.emptyObject(d, v, l.col(0))
	case "[]":
		return p.emptyArray(d, v, l.col(off))
	}
	h, ok, err := p.header(&l, after, off)
	if err != nil {
		return err
	}
	if ok && !h.hasKey {
		if h.keyed {
			return p.syntax(&l, off, "a keyless keyed header is only valid at the document root")
		}
		if h.fields != nil {
			return p.syntax(&l, off, "a keyless header with a field list is only valid at the document root")
		}
		return p.arrayFromHeader(&h, baseDepth, d, v, &l)
	}
	if ok && h.fields != nil {
		if err := p.enter(&l); err != nil {
			return err
		}
		defer p.leave()
		ot, err := p.beginObject(d, v, l.col(0))
		if err != nil {
			return err
		}
		seen := p.newSeen()
		defer p.freeSeen(seen)
		if err := p.addSeen(seen, h.key, &l); err != nil {
			return err
		}
		key := p.keepKey(&ot, h.key)
		fd, fv := ot.field(key)
		if err := p.arrayFromHeader(&h, baseDepth+1, fd, fv, &l); err != nil {
			return err
		}
		if err := ot.commit(p, key, l.col(off)); err != nil {
			return err
		}
		if err := p.siblings(baseDepth+1, &ot, seen); err != nil {
			return err
		}
		return ot.end(p, l.col(0))
	}
	if isKeyValue(after) {
		if err := p.enter(&l); err != nil {
			return err
		}
		defer p.leave()
		ot, err := p.beginObject(d, v, l.col(0))
		if err != nil {
			return err
		}
		seen := p.newSeen()
		defer p.freeSeen(seen)
		if err := p.keyValueAt(&l, after, off, baseDepth+1, &ot, seen); err != nil {
			return err
		}
		if err := p.siblings(baseDepth+1, &ot, seen); err != nil {
			return err
		}
		return ot.end(p, l.col(0))
	}
	t, err := p.prim(after, &l, off)
	if err != nil {
		return err
	}
	return p.setScalar(d, v, t)
}

// siblings decodes the fields after the first of a list-item object.
func (p *parser) siblings(depth int, ot *objTarget, seen *seenSet) error {
	for {
		l, err := p.peek()
		if err != nil {
			return err
		}
		if l == nil || l.depth < depth {
			return nil
		}
		if l.depth != depth {
			return overIndented(l, depth)
		}
		if err := p.next(); err != nil {
			return err
		}
		cl := p.cur
		if err := p.keyValue(&cl, depth, ot, seen); err != nil {
			return err
		}
	}
}
