package toon

import (
	"reflect"
	"strings"
	"unsafe"
)

// This file holds the structural decoder for objects, inline arrays and
// list arrays (spec §5, §8, §9.1-9.4, §10); tables are in parse_table.go.

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
	switch rest {
	case "":
		fd, fv := ot.field(key)
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
		fd, fv := ot.field(key)
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
		if set := ot.setter(key); set != nil {
			// Struct field of a plain kind: store by address.
			if err := set.set(p, unsafe.Add(ot.base, set.off), *t); err != nil {
				return err
			}
		} else {
			fd, fv := ot.field(key)
			if err := p.setScalar(fd, fv, t); err != nil {
				return err
			}
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
