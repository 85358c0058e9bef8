package toon

import (
	"fmt"
	"io"
	"reflect"
	"strings"
)

// Decoder reads TOON from a stream. Decode reads a whole document; Next
// reads the elements of the document's first array one at a time, in
// memory bounded by the longest line rather than the document:
//
//	dec := toon.NewDecoder(r, toon.UnmarshalOptions{})
//	for {
//		var a Airport
//		if err := dec.Next(&a); err == io.EOF {
//			break
//		} else if err != nil {
//			return err
//		}
//	}
//
// The array is the root array or the first top-level field holding an
// array (top-level fields before it are skipped). It may be tabular, a
// list or inline. Next checks the declared count as Unmarshal does, and
// stops reading at the array's end. A Decoder is not safe for concurrent
// use.
type Decoder struct {
	r     io.Reader
	opts  UnmarshalOptions
	err   error
	p     parser
	state int // 0 before Begin, 1 inside the array, 2 after it
	h     header
	hl    line
	kind  int // 0 tabular, 1 list, 2 inline
	depth int // content depth of rows or items
	count int
	first bool
	cells []string // inline values, kept
	plan  []planCell
	ptype reflect.Type
}

// NewDecoder returns a Decoder reading from r with opts.
func NewDecoder(r io.Reader, opts UnmarshalOptions) *Decoder {
	d := &Decoder{r: r}
	d.opts, d.err = opts.normalized()
	if d.err == nil {
		d.p.reset(newReaderSource(r), d.opts, false)
	}
	return d
}

// Decode reads the whole remaining input as one document into v.
func (d *Decoder) Decode(v any) error {
	if d.err != nil {
		return d.err
	}
	if d.state != 0 {
		return fmt.Errorf("toon: %w: Decode after Next", ErrStream)
	}
	d.state = 2
	rv := reflect.ValueOf(v)
	if rv.Kind() != reflect.Pointer || rv.IsNil() {
		return fmt.Errorf("toon: %w: Decode needs a non-nil pointer, got %T", ErrType, v)
	}
	return d.p.document(decoderFor(rv.Type().Elem()), rv.Elem())
}

// ArrayHeader describes the array Next iterates.
type ArrayHeader struct {
	Key    string   // "" for a root array
	Len    int      // the declared length
	Fields []string // tabular columns (nested groups by their top name), or nil
}

// Begin reads up to the first array and returns its header. Next calls it
// implicitly.
func (d *Decoder) Begin() (ArrayHeader, error) {
	if d.err != nil {
		return ArrayHeader{}, d.err
	}
	if d.state == 0 {
		d.err = d.begin()
		if d.err != nil {
			return ArrayHeader{}, d.err
		}
	}
	ah := ArrayHeader{Key: d.h.key, Len: d.h.length}
	for _, f := range d.h.fields {
		ah.Fields = append(ah.Fields, f.name)
	}
	return ah, nil
}

func (d *Decoder) begin() error {
	p := &d.p
	for {
		l, err := p.peek()
		if err != nil {
			return err
		}
		if l == nil {
			return fmt.Errorf("toon: %w: the document holds no array", ErrStream)
		}
		if l.depth != 0 {
			return overIndented(l, 0)
		}
		h, ok, err := p.header(l, l.content, 0)
		if err != nil {
			return err
		}
		if err := p.next(); err != nil {
			return err
		}
		if ok && !h.keyed {
			h.key = strings.Clone(h.key)
			d.h, d.hl = h, p.cur
			break
		}
		// Skip a top-level field that is not an array, with its content.
		for {
			l, err := p.peek()
			if err != nil {
				return err
			}
			if l == nil || l.depth == 0 {
				break
			}
			if err := p.next(); err != nil {
				return err
			}
		}
	}
	d.state = 1
	d.first = true
	switch {
	case d.h.inline != "":
		d.kind = 2
		for _, c := range splitDelimited(nil, d.h.inline, d.h.delim) {
			d.cells = append(d.cells, strings.Clone(c))
		}
		if p.strict && len(d.cells) != d.h.length {
			return countError(&d.hl, d.h.length, len(d.cells), "values")
		}
	case d.h.fields != nil:
		d.kind = 0
	default:
		d.kind = 1
	}
	if d.kind != 2 {
		var err error
		if d.depth, err = p.contentDepth(0); err != nil {
			return err
		}
	}
	return nil
}

// Next decodes the next element of the array into v, returning io.EOF
// after the last one.
func (d *Decoder) Next(v any) error {
	if _, err := d.Begin(); err != nil {
		return err
	}
	if d.state == 2 {
		return io.EOF
	}
	rv := reflect.ValueOf(v)
	if rv.Kind() != reflect.Pointer || rv.IsNil() {
		return fmt.Errorf("toon: %w: Next needs a non-nil pointer, got %T", ErrType, v)
	}
	dec := decoderFor(rv.Type().Elem())
	ev := rv.Elem()
	ok, err := d.next(dec, ev)
	if err != nil {
		d.err = err
		return err
	}
	if !ok {
		d.state = 2
		d.p.endSpan(d.first)
		if err := d.finish(); err != nil {
			d.err = err
			return err
		}
		return io.EOF
	}
	d.count++
	return nil
}

func (d *Decoder) next(dec *decoder, ev reflect.Value) (bool, error) {
	p := &d.p
	if d.kind == 2 {
		if d.count >= len(d.cells) {
			return false, nil
		}
		t, err := p.prim(d.cells[d.count], &d.hl, 0)
		if err != nil {
			return false, err
		}
		return true, p.setScalar(dec, ev, t)
	}
	if p.strict && d.count >= d.h.length {
		return false, nil
	}
	l, err := p.peek()
	if err != nil || l == nil || l.depth <= 0 {
		return false, err
	}
	if l.depth != d.depth {
		return false, overIndented(l, d.depth)
	}
	if d.kind == 1 {
		if !(strings.HasPrefix(l.content, "- ") || l.content == "-") {
			return false, nil
		}
		if err := p.spanLine(&d.first); err != nil {
			return false, err
		}
		resetValue(ev)
		return true, p.listItem(d.depth, dec, ev)
	}
	if !isDataRow(l.content, d.h.delim) {
		return false, nil
	}
	if err := p.spanLine(&d.first); err != nil {
		return false, err
	}
	if ev.Type() != d.ptype {
		d.ptype, d.plan = ev.Type(), rowPlanFor(&d.h, dec)
	}
	resetValue(ev)
	if d.plan != nil {
		return true, p.planRow(d.plan, ev.Addr().UnsafePointer(), &d.h)
	}
	p.cells = splitDelimited(p.cells, p.cur.content, d.h.delim)
	if len(p.cells) != d.h.leaves {
		return false, errorf(ErrCount, p.cur.num, 0, "row has %d cells, header declares %d fields", len(p.cells), d.h.leaves)
	}
	return true, p.row(d.h.fields, dec, ev)
}

// resetValue zeroes a reused element so that fields absent from this row
// do not keep the previous row's values.
func resetValue(v reflect.Value) {
	if v.CanSet() {
		v.SetZero()
	}
}

// finish checks the declared count after the last element.
func (d *Decoder) finish() error {
	p := &d.p
	if !p.strict {
		return nil
	}
	what := [...]string{"rows", "items", "values"}[d.kind]
	if d.count != d.h.length {
		return countError(&d.hl, d.h.length, d.count, what)
	}
	if d.kind == 2 {
		return nil
	}
	l, err := p.peek()
	if err != nil {
		return err
	}
	if l != nil && l.depth == d.depth {
		if (d.kind == 0 && !strings.HasPrefix(l.content, "- ") && isDataRow(l.content, d.h.delim)) ||
			(d.kind == 1 && strings.HasPrefix(l.content, "- ")) {
			return errorf(ErrCount, l.num, 0, "header declares %d %s, found more", d.h.length, what)
		}
	}
	return nil
}
