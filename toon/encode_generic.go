package toon

// This file encodes the generic data model (nil, bool, string, Number,
// Object, []any) with the same decisions as the reference encoder, which
// is what makes our output byte-identical to @toon-format/toon: inline
// arrays for primitives, list items for arrays of arrays and mixed arrays,
// tables for uniform objects (with nested field groups), and keyed tables
// for objects of two or more uniform objects.

// field is one entry of a tabular header; children is non-nil for a nested
// field group.
type field struct {
	name     string
	children []field
}

// genEncoder writes one document of generic values.
type genEncoder struct {
	buf    []byte
	indent int
	delim  Delimiter
}

func (e *genEncoder) newLine(depth int) {
	if len(e.buf) > 0 {
		e.buf = append(e.buf, '\n')
	}
	for i := depth * e.indent; i > 0; i-- {
		e.buf = append(e.buf, ' ')
	}
}

func (e *genEncoder) listItem(depth int) {
	e.newLine(depth)
	e.buf = append(e.buf, '-', ' ')
}

func isPrimitive(v any) bool {
	switch v.(type) {
	case nil, bool, string, Number:
		return true
	}
	return false
}

// appendPrimitive appends a normalized primitive with quoting for delim.
func appendPrimitive(dst []byte, v any, delim Delimiter) []byte {
	switch v := v.(type) {
	case nil:
		return append(dst, "null"...)
	case bool:
		if v {
			return append(dst, "true"...)
		}
		return append(dst, "false"...)
	case Number:
		return append(dst, v...) // normalized values are canonical
	case string:
		return appendString(dst, v, delim)
	}
	panic("toon: appendPrimitive on non-primitive")
}

func (e *genEncoder) encodeRoot(v any) {
	switch v := v.(type) {
	case []any:
		e.encodeArray(nil, v, 0)
	case Object:
		if f := keyedFields(v); f != nil {
			e.encodeKeyed(nil, v, f, 0)
			return
		}
		e.encodeFields(v, 0)
	case string:
		if len(v) >= 3 && v[:3] == "\uFEFF" {
			// A leading BOM would be stripped by decoders (spec §12).
			e.buf = appendQuoted(e.buf, v)
			return
		}
		e.buf = appendString(e.buf, v, e.delim)
	default:
		e.buf = appendPrimitive(e.buf, v, e.delim)
	}
}

func (e *genEncoder) encodeFields(o Object, depth int) {
	for _, m := range o {
		e.encodeField(m.Key, m.Value, depth)
	}
}

func (e *genEncoder) encodeField(key string, v any, depth int) {
	switch v := v.(type) {
	case []any:
		k := key
		e.encodeArray(&k, v, depth)
	case Object:
		if f := keyedFields(v); f != nil {
			k := key
			e.encodeKeyed(&k, v, f, depth)
			return
		}
		e.newLine(depth)
		e.buf = appendKey(e.buf, key)
		e.buf = append(e.buf, ':')
		e.encodeFields(v, depth+1)
	default:
		e.newLine(depth)
		e.buf = appendKey(e.buf, key)
		e.buf = append(e.buf, ':', ' ')
		e.buf = appendPrimitive(e.buf, v, e.delim)
	}
}

// appendHeader appends [key][N(:)(delim)]({fields}): without a line break.
func (e *genEncoder) appendHeader(key *string, n int, fields []field, keyed bool) {
	e.buf = appendHeader(e.buf, key, n, fields, keyed, e.delim)
}

func appendHeader(dst []byte, key *string, n int, fields []field, keyed bool, delim Delimiter) []byte {
	if key != nil {
		dst = appendKey(dst, *key)
	}
	dst = append(dst, '[')
	dst = appendInt(dst, int64(n))
	if keyed {
		dst = append(dst, ':')
	}
	if delim != Comma {
		dst = append(dst, byte(delim))
	}
	dst = append(dst, ']')
	if fields != nil {
		dst = append(dst, '{')
		dst = appendFieldList(dst, fields, delim)
		dst = append(dst, '}')
	}
	return append(dst, ':')
}

func appendFieldList(dst []byte, fields []field, delim Delimiter) []byte {
	for i, f := range fields {
		if i > 0 {
			dst = append(dst, byte(delim))
		}
		dst = appendKey(dst, f.name)
		if f.children != nil {
			dst = append(dst, '{')
			dst = appendFieldList(dst, f.children, delim)
			dst = append(dst, '}')
		}
	}
	return dst
}

func allPrimitives(a []any) bool {
	for _, v := range a {
		if !isPrimitive(v) {
			return false
		}
	}
	return true
}

func (e *genEncoder) encodeArray(key *string, a []any, depth int) {
	if len(a) == 0 {
		e.newLine(depth)
		if key != nil {
			e.buf = appendKey(e.buf, *key)
			e.buf = append(e.buf, ':', ' ', '[', ']')
		} else {
			e.buf = append(e.buf, '[', ']')
		}
		return
	}
	if allPrimitives(a) {
		e.newLine(depth)
		e.appendInline(key, a)
		return
	}
	allArrays, allObjects := true, true
	for _, v := range a {
		switch v := v.(type) {
		case []any:
			allObjects = false
			if !allPrimitives(v) {
				allArrays = false
			}
		case Object:
			allArrays = false
		default:
			allArrays, allObjects = false, false
		}
	}
	if allArrays {
		e.newLine(depth)
		e.appendHeader(key, len(a), nil, false)
		for _, v := range a {
			e.listItem(depth + 1)
			e.appendInline(nil, v.([]any))
		}
		return
	}
	if allObjects {
		if f := tabularFields(a); f != nil {
			e.newLine(depth)
			e.appendHeader(key, len(a), f, false)
			e.writeRows(a, f, depth+1)
			return
		}
	}
	e.newLine(depth)
	e.appendHeader(key, len(a), nil, false)
	for _, v := range a {
		e.encodeListItem(v, depth+1)
	}
}

// appendInline appends key[N]: v1,v2 on the current line.
func (e *genEncoder) appendInline(key *string, a []any) {
	e.appendHeader(key, len(a), nil, false)
	if len(a) == 0 {
		return
	}
	e.buf = append(e.buf, ' ')
	for i, v := range a {
		if i > 0 {
			e.buf = append(e.buf, byte(e.delim))
		}
		e.buf = appendPrimitive(e.buf, v, e.delim)
	}
}

func (e *genEncoder) writeRows(rows []any, fields []field, depth int) {
	for _, r := range rows {
		e.newLine(depth)
		e.appendLeaves(r.(Object), fields, true)
	}
}

// appendLeaves appends an object's leaf values in header order.
func (e *genEncoder) appendLeaves(o Object, fields []field, first bool) bool {
	idx := newMemberIndex(o)
	for _, f := range fields {
		v, _ := idx.get(f.name)
		if f.children != nil {
			first = e.appendLeaves(v.(Object), f.children, first)
			continue
		}
		if !first {
			e.buf = append(e.buf, byte(e.delim))
		}
		first = false
		e.buf = appendPrimitive(e.buf, v, e.delim)
	}
	return first
}

func (e *genEncoder) encodeKeyed(key *string, o Object, fields []field, depth int) {
	e.newLine(depth)
	e.appendHeader(key, len(o), fields, true)
	e.writeEntries(o, fields, depth+1)
}

func (e *genEncoder) writeEntries(o Object, fields []field, depth int) {
	for _, m := range o {
		e.newLine(depth)
		e.buf = appendKey(e.buf, m.Key)
		e.buf = append(e.buf, ':', ' ')
		e.appendLeaves(m.Value.(Object), fields, true)
	}
}

func (e *genEncoder) encodeListItem(v any, depth int) {
	switch v := v.(type) {
	case []any:
		e.listItem(depth)
		if allPrimitives(v) {
			e.appendInline(nil, v)
			return
		}
		e.appendHeader(nil, len(v), nil, false)
		for _, x := range v {
			e.encodeListItem(x, depth+1)
		}
	case Object:
		e.encodeObjectItem(v, depth)
	default:
		e.listItem(depth)
		e.buf = appendPrimitive(e.buf, v, e.delim)
	}
}

func (e *genEncoder) encodeObjectItem(o Object, depth int) {
	if len(o) == 0 {
		e.newLine(depth)
		e.buf = append(e.buf, '-')
		return
	}
	first := o[0]
	key := first.Key
	switch v := first.Value.(type) {
	case []any:
		if isArrayOfObjects(v) {
			if f := tabularFields(v); f != nil {
				e.listItem(depth)
				e.appendHeader(&key, len(v), f, false)
				e.writeRows(v, f, depth+2)
				e.encodeFields(o[1:], depth+1)
				return
			}
		}
		e.listItem(depth)
		switch {
		case len(v) == 0:
			e.buf = appendKey(e.buf, key)
			e.buf = append(e.buf, ':', ' ', '[', ']')
		case allPrimitives(v):
			e.appendInline(&key, v)
		default:
			e.appendHeader(&key, len(v), nil, false)
			for _, x := range v {
				e.encodeListItem(x, depth+2)
			}
		}
	case Object:
		if f := keyedFields(v); f != nil {
			e.listItem(depth)
			e.appendHeader(&key, len(v), f, true)
			e.writeEntries(v, f, depth+2)
			e.encodeFields(o[1:], depth+1)
			return
		}
		e.listItem(depth)
		e.buf = appendKey(e.buf, key)
		e.buf = append(e.buf, ':')
		e.encodeFields(v, depth+2)
	default:
		e.listItem(depth)
		e.buf = appendKey(e.buf, key)
		e.buf = append(e.buf, ':', ' ')
		e.buf = appendPrimitive(e.buf, v, e.delim)
	}
	e.encodeFields(o[1:], depth+1)
}

func isArrayOfObjects(a []any) bool {
	for _, v := range a {
		if _, ok := v.(Object); !ok {
			return false
		}
	}
	return true
}

// tabularFields returns the header of rows (all Objects) when they qualify
// for tabular form (spec §9.3), or nil.
func tabularFields(rows []any) []field {
	if len(rows) == 0 {
		return nil
	}
	first := rows[0].(Object)
	if len(first) == 0 {
		return nil
	}
	// Look keys up through an index, so that wide objects stay linear.
	idx := make([]memberIndex, len(rows))
	for i, r := range rows {
		o := r.(Object)
		if len(o) != len(first) {
			return nil
		}
		idx[i] = newMemberIndex(o)
		if i > 0 {
			for _, m := range first {
				if _, ok := idx[i].get(m.Key); !ok {
					return nil
				}
			}
		}
	}
	fields := make([]field, 0, len(first))
	col := make([]any, len(rows))
	for _, m := range first {
		for i := range rows {
			col[i], _ = idx[i].get(m.Key)
		}
		f, ok := classifyColumn(m.Key, col)
		if !ok {
			return nil
		}
		fields = append(fields, f)
	}
	return fields
}

// memberIndex looks up an Object's members by key: a linear scan for the
// small objects that dominate real data, a map for wide ones.
type memberIndex struct {
	o Object
	m map[string]int
}

func newMemberIndex(o Object) memberIndex {
	if len(o) <= 16 {
		return memberIndex{o: o}
	}
	m := make(map[string]int, len(o))
	for i := len(o) - 1; i >= 0; i-- {
		m[o[i].Key] = i
	}
	return memberIndex{o: o, m: m}
}

func (x memberIndex) get(k string) (any, bool) {
	if x.m == nil {
		return x.o.Get(k)
	}
	i, ok := x.m[k]
	if !ok {
		return nil, false
	}
	return x.o[i].Value, true
}

func classifyColumn(name string, col []any) (field, bool) {
	if allPrimitives(col) {
		return field{name: name}, true
	}
	sub := make([]any, len(col))
	for i, v := range col {
		o, ok := v.(Object)
		if !ok || len(o) == 0 {
			return field{}, false
		}
		sub[i] = o
	}
	children := tabularFields(sub)
	if children == nil {
		return field{}, false
	}
	return field{name: name, children: children}, true
}

// keyedFields returns the header of an object that qualifies for keyed
// tabular form (spec §9.5), or nil.
func keyedFields(o Object) []field {
	if len(o) < 2 {
		return nil
	}
	for _, m := range o {
		if v, ok := m.Value.(Object); !ok || len(v) == 0 {
			return nil
		}
	}
	vals := make([]any, len(o))
	for i, m := range o {
		vals[i] = m.Value
	}
	return tabularFields(vals)
}
