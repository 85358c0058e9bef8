package payload

import (
	"slices"

	"github.com/wirebench/wirebench/results"
)

// maxDistinctKeys bounds the set of key names the shape statistics keep:
// past it DistinctKeys is a lower bound (a document keyed by ids).
const maxDistinctKeys = 1 << 16

// shapeAcc accumulates the shape statistics over every sample read, not
// only the kept ones: it holds counters, the key names (bounded) and one
// small integer per sample for the median depth.
type shapeAcc struct {
	s      results.PayloadShape
	keys   map[string]struct{}
	depths []int16
	bytes  int64
	// scanner counts samples from their bytes (scan); add and walk count
	// a tree, the reference the scan is tested against.
	scanner shapeScanner
}

func newShapeAcc() *shapeAcc { return &shapeAcc{keys: map[string]struct{}{}} }

// add counts one sample and returns how many values it holds.
func (a *shapeAcc) add(v Value, size int) int {
	before := a.values()
	a.s.Samples++
	a.bytes += int64(size)
	d := a.walk(v, 0)
	a.depths = append(a.depths, int16(min(d, 1<<15-1)))
	a.s.DepthMax = max(a.s.DepthMax, d)
	return int(a.values() - before)
}

func (a *shapeAcc) values() int64 {
	s := &a.s
	return s.Objects + s.Arrays + s.Numbers + s.Strings + s.Bools + s.Nulls
}

// walk counts v and returns its depth.
func (a *shapeAcc) walk(v Value, depth int) int {
	s := &a.s
	switch v.Kind {
	case Null:
		s.Nulls++
		s.OtherBytes += 4
	case Bool:
		s.Bools++
		s.OtherBytes += 5
	case Number:
		s.Numbers++
		s.NumberBytes += int64(len(v.Str))
		if isInteger(v.Str) {
			s.Integers++
			if pastFloat(v.Str) {
				s.BigInts++
			}
		}
	case String:
		s.Strings++
		s.StringBytes += int64(len(v.Str)) + 2
		if looksBinary(v.Str) {
			s.Binary++
		} else if _, ok := parseTime(v.Str); ok {
			s.Timestamps++
		}
	case Array:
		s.Arrays++
		s.ArrayItems += int64(len(v.Arr))
		d := depth + 1
		for _, e := range v.Arr {
			d = max(d, a.walk(e, depth+1))
		}
		if len(v.Arr) >= 2 && v.Arr[0].Kind == Object {
			objs := true
			for _, e := range v.Arr {
				objs = objs && e.Kind == Object
			}
			if objs {
				s.ObjectArrays++
				if uniform(v.Arr) {
					s.UniformArrays++
					s.UniformItems += int64(len(v.Arr))
				}
			}
		}
		return d
	case Object:
		s.Objects++
		d := depth + 1
		for _, m := range v.Obj {
			s.Keys++
			s.KeyBytes += int64(len(m.Key)) + 2
			if len(a.keys) < maxDistinctKeys {
				a.keys[m.Key] = struct{}{}
			}
			d = max(d, a.walk(m.Val, depth+1))
		}
		return d
	}
	return depth
}

// uniform reports objects with the same keys in the same order and only
// primitive values: what TOON writes as a table of rows.
func uniform(objs []Value) bool {
	first := objs[0].Obj
	for _, o := range objs {
		if len(o.Obj) != len(first) {
			return false
		}
		for i, m := range o.Obj {
			if m.Key != first[i].Key || m.Val.Kind == Array || m.Val.Kind == Object {
				return false
			}
		}
	}
	return true
}

// looksBinary guesses base64 data: 16+ characters of the base64 alphabet
// with at least one digit or '+', '/', '-', '_' and both letter cases, a
// length a whole number of quanta when padded.
func looksBinary(s string) bool {
	if len(s) < 16 {
		return false
	}
	var upper, lower, other bool
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c >= 'A' && c <= 'Z':
			upper = true
		case c >= 'a' && c <= 'z':
			lower = true
		case c >= '0' && c <= '9' || c == '+' || c == '/' || c == '-' || c == '_':
			other = true
		case c == '=' && i >= len(s)-2:
		default:
			return false
		}
	}
	if !upper || !lower || !other {
		return false
	}
	_, err := decodeBase64(s)
	return err == nil
}

func (a *shapeAcc) result() *results.PayloadShape {
	s := a.s
	s.DistinctKeys = len(a.keys)
	d := slices.Clone(a.depths)
	slices.Sort(d)
	if n := len(d); n > 0 {
		if n%2 == 1 {
			s.DepthMedian = float64(d[n/2])
		} else {
			s.DepthMedian = float64(d[n/2-1]+d[n/2]) / 2
		}
	}
	// The punctuation and literals: what the counted parts leave.
	s.OtherBytes = max(0, a.bytes-s.KeyBytes-s.StringBytes-s.NumberBytes)
	return &s
}
