package toon

import (
	"reflect"
	"strings"
	"unsafe"
)

// This file decodes tabular arrays and keyed tables (spec §9.3, §9.5),
// including the fast path that writes cells straight into struct fields.

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
	lastNum := hl.num
	fast := plan != nil && at.mode == dSlice
	for !p.strict || count < h.length {
		if fast && p.fastRow(rowDepth, h.delim) {
			if first {
				first = false
				p.started++
			}
			lastNum = p.cur.num
			if err := p.planRow(plan, at.nextPtr(), h); err != nil {
				return err
			}
			at.commit()
			count++
			continue
		}
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
		lastNum = p.cur.num
		if plan != nil && at.mode == dSlice {
			err = p.planRow(plan, at.nextPtr(), h)
		} else if ed, ev := at.next(); plan != nil {
			var base unsafe.Pointer
			if ev.IsValid() { // invalid beyond a Go array's length
				base = ev.Addr().UnsafePointer()
			}
			err = p.planRow(plan, base, h)
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
			return errorf(ErrCount, lastNum, 0, "header declares %d rows, found %d", h.length, count)
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

// fastRow consumes the next line straight from in-memory input when it is
// a plain table row: exactly rowDepth levels of space indentation, not a
// comment, no trailing space or CR, no blank line before it, and a data
// row by §9.3. Anything else, including the document's last line, is left
// to the scanner, which would classify such a line the same way; this
// only skips its generality on the hot path.
func (p *parser) fastRow(rowDepth int, delim byte) bool {
	sc := &p.sc
	src := &p.strSrc
	if !p.stable || sc.hasPeek || sc.eof || !sc.validated || sc.blank != 0 || sc.num == 0 || src.done {
		return false
	}
	rest := src.s[src.pos:]
	nl := strings.IndexByte(rest, '\n')
	if nl < 0 {
		return false
	}
	raw := rest[:nl]
	ind := rowDepth * sc.indent
	if len(raw) <= ind {
		return false
	}
	switch raw[ind] {
	case ' ', '\t', '#':
		return false
	}
	switch raw[len(raw)-1] {
	case ' ', '\r':
		return false
	}
	for i := 0; i < ind; i++ {
		if raw[i] != ' ' {
			return false
		}
	}
	content := raw[ind:]
	if !isDataRow(content, delim) {
		return false
	}
	src.pos += nl + 1
	sc.num++
	p.cur = line{content: content, indent: ind, depth: rowDepth, num: sc.num}
	return true
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

// planRow decodes the current line's cells straight into the struct at base,
// scanning the line once; a row of the wrong width is ErrCount.
func (p *parser) planRow(plan []planCell, base unsafe.Pointer, h *header) error {
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
		if err := plan[n].set(p, unsafe.Add(base, plan[n].off), tk); err != nil {
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
