package payload

import (
	"bytes"
	"fmt"
	"unsafe"
)

// shapeScanner counts a sample's shape straight from its bytes, in one
// pass that builds no tree: every sample read is counted, and only the
// few the reservoir keeps are parsed into Values (a tree per sample of a
// 1 GB file cost more than the libraries' own decode of it). It checks
// the same grammar as parser, which it shares its strings and numbers
// with; the counts are walk's, value for value (FuzzShapeScan).
type shapeScanner struct {
	parser
	acc   *shapeAcc
	nodes int
	// keys holds, for each array being checked for uniformity, its first
	// object's member names, one after the other; keyEnds where each ends.
	// Nested arrays push above their parent's and pop when they end.
	keys    []byte
	keyEnds []int
	// recent is the name last seen at each member position of a sample
	// (its k-th member from the start), up to 32 bytes, and recentLen its
	// length + 1 (0: none yet): samples of one shape repeat their names in
	// order, so most are known here by a compare instead of a lookup in
	// the set of names (a fifth of the analysis).
	recent    [256][32]byte
	recentLen [256]uint8
	ord       int
}

// table follows one array's elements for what walk counts of it: every
// element an object, and the objects uniform (the first one's keys, in
// order, and primitive values only).
type table struct {
	n      int
	objs   bool
	uni    bool
	kbase  int // keys[kbase:] and keyEnds[kstart:] are the first object's names
	kstart int
	nkeys  int
}

// scan counts data, one JSON value as parseValue reads it, as add counts
// its tree, and returns how many values it holds. On an error the counts
// are partial (the run stops there); the error is the parser's, which
// says where and why.
func (a *shapeAcc) scan(data []byte, maxDepth int) (int, error) {
	s := &a.scanner
	s.parser = parser{data: data, maxDepth: maxDepth, buf: s.buf}
	s.acc, s.nodes, s.ord = a, 0, 0
	s.keys, s.keyEnds = s.keys[:0], s.keyEnds[:0]
	s.ws()
	_, d, err := s.value(0, nil)
	if err == nil {
		s.ws()
		if s.pos < len(s.data) {
			err = s.errorf("data after the value")
		}
	}
	s.data = nil
	if err != nil {
		if _, perr := parseValue(data, maxDepth); perr != nil {
			return 0, perr
		}
		return 0, fmt.Errorf("the shape scan refused what the parser reads: %w", err)
	}
	a.s.Samples++
	a.bytes += int64(len(data))
	a.depths = append(a.depths, int16(min(d, 1<<15-1)))
	a.s.DepthMax = max(a.s.DepthMax, d)
	return s.nodes, nil
}

// view is b as a string for a call that does not keep it.
func view(b []byte) string { return unsafe.String(unsafe.SliceData(b), len(b)) }

// value counts one value at depth and returns its kind and depth (walk's).
// t, when set, is the array the value is an element of, still uniform.
func (s *shapeScanner) value(depth int, t *table) (Kind, int, error) {
	if s.pos >= len(s.data) {
		return 0, 0, s.errorf("unexpected end of input")
	}
	st := &s.acc.s
	s.nodes++
	switch c := s.data[s.pos]; {
	case c == '{':
		d, err := s.object(depth+1, t)
		return Object, d, err
	case c == '[':
		d, err := s.array(depth + 1)
		return Array, d, err
	case c == '"':
		b, err := s.strBytes()
		if err != nil {
			return 0, 0, err
		}
		st.Strings++
		st.StringBytes += int64(len(b)) + 2
		if looksBinary(view(b)) {
			st.Binary++
		} else if _, ok := parseTime(view(b)); ok {
			st.Timestamps++
		}
		return String, depth, nil
	case c == '-' || c >= '0' && c <= '9':
		tok, err := s.number()
		if err != nil {
			return 0, 0, err
		}
		st.Numbers++
		st.NumberBytes += int64(len(tok))
		if isInteger(view(tok)) {
			st.Integers++
			if pastFloat(view(tok)) {
				st.BigInts++
			}
		}
		return Number, depth, nil
	case bytes.HasPrefix(s.data[s.pos:], []byte("true")):
		s.pos += 4
		st.Bools++
		return Bool, depth, nil
	case bytes.HasPrefix(s.data[s.pos:], []byte("false")):
		s.pos += 5
		st.Bools++
		return Bool, depth, nil
	case bytes.HasPrefix(s.data[s.pos:], []byte("null")):
		s.pos += 4
		st.Nulls++
		return Null, depth, nil
	default:
		return 0, 0, s.errorf("unexpected %s", quoteByte(c))
	}
}

// object counts an object at depth; t is the array it is an element of,
// if that array may still be a uniform table.
func (s *shapeScanner) object(depth int, t *table) (int, error) {
	if err := s.deeper(depth); err != nil {
		return 0, err
	}
	a := s.acc
	a.s.Objects++
	s.pos++ // {
	d := depth
	members := 0
	s.ws()
	if s.pos < len(s.data) && s.data[s.pos] == '}' {
		s.pos++
		s.ended(t, members)
		return d, nil
	}
	for {
		s.ws()
		if s.pos >= len(s.data) || s.data[s.pos] != '"' {
			return 0, s.errorf("want a member name")
		}
		k, err := s.strBytes()
		if err != nil {
			return 0, err
		}
		a.s.Keys++
		a.s.KeyBytes += int64(len(k)) + 2
		if !s.known(k) {
			if _, ok := a.keys[string(k)]; !ok && len(a.keys) < maxDistinctKeys {
				a.keys[string(k)] = struct{}{}
			}
		}
		if t != nil && t.uni {
			s.member(t, members, k)
		}
		members++
		s.ws()
		if s.pos >= len(s.data) || s.data[s.pos] != ':' {
			return 0, s.errorf("want ':' after a member name")
		}
		s.pos++
		s.ws()
		kind, e, err := s.value(depth, nil)
		if err != nil {
			return 0, err
		}
		if kind == Array || kind == Object {
			if t != nil {
				t.uni = false
			}
		}
		d = max(d, e)
		s.ws()
		if s.pos >= len(s.data) {
			return 0, s.errorf("unexpected end of input in an object")
		}
		switch s.data[s.pos] {
		case ',':
			s.pos++
		case '}':
			s.pos++
			s.ended(t, members)
			return d, nil
		default:
			return 0, s.errorf("want ',' or '}' in an object, got %s", quoteByte(s.data[s.pos]))
		}
	}
}

// known reports whether k is the name this member position had last,
// so that it is in the set of names already (or the set was full); if not
// it remembers k for the next sample.
func (s *shapeScanner) known(k []byte) bool {
	o := s.ord
	s.ord++
	if o >= len(s.recent) || len(k) > len(s.recent[o]) {
		return false
	}
	r := &s.recent[o]
	if int(s.recentLen[o]) == len(k)+1 && bytes.Equal(r[:len(k)], k) {
		return true
	}
	copy(r[:], k)
	s.recentLen[o] = uint8(len(k) + 1)
	return false
}

// ended checks the member count of an element of t once it ended.
func (s *shapeScanner) ended(t *table, members int) {
	if t != nil && t.n > 0 && members != t.nkeys {
		t.uni = false
	}
}

// member checks (first object: records) the i-th member name k of an
// element of t.
func (s *shapeScanner) member(t *table, i int, k []byte) {
	if t.n == 0 {
		s.keys = append(s.keys, k...)
		s.keyEnds = append(s.keyEnds, len(s.keys))
		t.nkeys++
		return
	}
	if i >= t.nkeys {
		t.uni = false
		return
	}
	start := t.kbase
	if i > 0 {
		start = s.keyEnds[t.kstart+i-1]
	}
	if !bytes.Equal(s.keys[start:s.keyEnds[t.kstart+i]], k) {
		t.uni = false
	}
}

func (s *shapeScanner) array(depth int) (int, error) {
	if err := s.deeper(depth); err != nil {
		return 0, err
	}
	a := s.acc
	a.s.Arrays++
	s.pos++ // [
	d := depth
	t := table{objs: true, uni: true, kbase: len(s.keys), kstart: len(s.keyEnds)}
	s.ws()
	if s.pos < len(s.data) && s.data[s.pos] == ']' {
		s.pos++
		return d, nil
	}
	for {
		s.ws()
		var tt *table
		if t.objs && t.uni {
			tt = &t
		}
		kind, e, err := s.value(depth, tt)
		if err != nil {
			return 0, err
		}
		if kind != Object {
			t.objs = false
		}
		t.n++
		d = max(d, e)
		s.ws()
		if s.pos >= len(s.data) {
			return 0, s.errorf("unexpected end of input in an array")
		}
		switch s.data[s.pos] {
		case ',':
			s.pos++
		case ']':
			s.pos++
			s.keys, s.keyEnds = s.keys[:t.kbase], s.keyEnds[:t.kstart]
			a.s.ArrayItems += int64(t.n)
			if t.n >= 2 && t.objs {
				a.s.ObjectArrays++
				if t.uni {
					a.s.UniformArrays++
					a.s.UniformItems += int64(t.n)
				}
			}
			return d, nil
		default:
			return 0, s.errorf("want ',' or ']' in an array, got %s", quoteByte(s.data[s.pos]))
		}
	}
}
