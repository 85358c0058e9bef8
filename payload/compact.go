package payload

import (
	"fmt"
)

// compactName is the compact JSON row: the samples written as `jq -c`
// writes them, by wirebench's own writer and parser, beside the libraries'
// JSON rows (which are what a Go service deploys: encoding/json and goccy
// escape <, > and &, sort a map's keys and spell numbers as float64).
const compactName = "json-compact"

// compactCodec writes a Value as `jq -c` does (appendJSON: no
// whitespace, keys in order, numbers as written, strings escaped as jq
// escapes them) and reads JSON back into a Value with the lab's own
// parser, which keeps the same.
type compactCodec struct{}

func (compactCodec) Name() string { return compactName }

func (compactCodec) Marshal(v any) ([]byte, error) {
	x, ok := v.(Value)
	if !ok {
		return nil, fmt.Errorf("payload: %s encodes a Value, not %T", compactName, v)
	}
	return appendJSON(nil, x), nil
}

func (compactCodec) Unmarshal(data []byte, v any) error {
	p, ok := v.(*Value)
	if !ok {
		return fmt.Errorf("payload: %s decodes into a *Value, not %T", compactName, v)
	}
	x, err := parseValue(data, DefaultMaxDepth)
	*p = x
	return err
}

// compactFormat is the compact JSON row's format. A key written twice
// keeps its last value in its first place, as jq keeps it (the round trip
// names it a duplicate key); everything else comes back as written.
func compactFormat() *format {
	c := compactCodec{}
	return &format{
		name: compactName, library: "wirebench (jq -c's form: keys in order, numbers as written, no HTML escaping)", codec: c,
		how:  "wirebench's ordered tree (keys in order, number tokens)",
		toGo: func(v Value) (any, error) { return foldDuplicates(v), nil },
		decode: func(data []byte) (any, error) {
			var v Value
			err := c.Unmarshal(data, &v)
			return v, err
		},
		back: func(x any) (Value, error) { return x.(Value), nil },
	}
}

// foldDuplicates gives each object's duplicate keys one member, in the
// first one's place with the last one's value: what jq makes of them.
func foldDuplicates(v Value) Value {
	switch v.Kind {
	case Array:
		a := make([]Value, len(v.Arr))
		for i, e := range v.Arr {
			a[i] = foldDuplicates(e)
		}
		v.Arr = a
	case Object:
		o := make([]Member, 0, len(v.Obj))
		at := make(map[string]int, len(v.Obj))
		for _, m := range v.Obj {
			m.Val = foldDuplicates(m.Val)
			if i, ok := at[m.Key]; ok {
				o[i].Val = m.Val
				continue
			}
			at[m.Key] = len(o)
			o = append(o, m)
		}
		v.Obj = o
	}
	return v
}
