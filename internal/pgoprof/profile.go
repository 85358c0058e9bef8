// Package pgoprof reads what a PGO profile (cmd/wirebench/default.pgo, a
// pprof CPU profile) says about our functions, and lists those it names
// that the source no longer declares: the compiler applies the profile by
// function name, so a function renamed or removed since the profile was
// taken silently loses its hot calls' inlining and devirtualization.
// cmd/wirebench's TestPGOProfileFresh uses it; nothing in the binary does.
package pgoprof

import (
	"bytes"
	"compress/gzip"
	"errors"
	"fmt"
	"io"

	"google.golang.org/protobuf/encoding/protowire"
)

// Profile is what the check needs of a pprof profile: the stacks'
// function names and each sample's weight.
type Profile struct {
	Total   int64             // all samples' weight
	Weights map[string]int64  // function name → weight of the samples it is on the stack of
	Files   map[string]string // function name → its file, a path on the machine that profiled
}

// The fields of pprof's profile.proto read here (the rest are skipped):
//
//	Profile   1 sample_type: ValueType   2 sample: Sample   4 location: Location
//	          5 function: Function       6 string_table: string
//	ValueType 1 type (string index)
//	Sample    1 location_id (packed or not, leaf first)   2 value (packed or not)
//	Location  1 id   4 line: Line{1 function_id} (inlined frames first)
//	Function  1 id   2 name (string index)   4 filename (string index)

// Parse parses a pprof profile (profile.proto, gzipped or not):
// of each sample, the value of its first "samples" type (else its first
// value), added once to every function on its stack.
func Parse(data []byte) (*Profile, error) {
	if len(data) >= 2 && data[0] == 0x1f && data[1] == 0x8b {
		zr, err := gzip.NewReader(bytes.NewReader(data))
		if err != nil {
			return nil, fmt.Errorf("profile: %w", err)
		}
		// A profile of ours is a few hundred kB unzipped; the limit keeps a
		// corrupt or hostile file from taking the memory.
		raw, err := io.ReadAll(io.LimitReader(zr, 64<<20+1))
		if err != nil {
			return nil, fmt.Errorf("profile: gunzip: %w", err)
		}
		if len(raw) > 64<<20 {
			return nil, errors.New("profile: over 64 MiB unzipped")
		}
		data = raw
	}
	return parse(data)
}

// parse parses an unzipped profile.proto: see Parse.
func parse(data []byte) (*Profile, error) {
	type valueType struct{ typ int64 }
	type sample struct{ locs, values []uint64 }
	type function struct{ name, file int64 }
	var (
		types   []valueType
		samples []sample
		locs    = map[uint64][]uint64{} // location id → function ids, leaf first
		funcs   = map[uint64]function{}
		strs    []string
	)
	err := eachField(data, func(num protowire.Number, typ protowire.Type, v []byte, x uint64) error {
		if typ != protowire.BytesType {
			return nil
		}
		switch num {
		case 1: // sample_type: ValueType{type, unit}
			var vt valueType
			err := eachField(v, func(num protowire.Number, typ protowire.Type, _ []byte, x uint64) error {
				if num == 1 && typ == protowire.VarintType {
					vt.typ = int64(x)
				}
				return nil
			})
			if err != nil {
				return fmt.Errorf("sample_type: %w", err)
			}
			types = append(types, vt)
		case 2: // sample: location_id, value (packed or not)
			var s sample
			err := eachField(v, func(num protowire.Number, typ protowire.Type, v []byte, x uint64) error {
				switch num {
				case 1:
					return appendVarints(&s.locs, typ, v, x)
				case 2:
					return appendVarints(&s.values, typ, v, x)
				}
				return nil
			})
			if err != nil {
				return fmt.Errorf("sample %d: %w", len(samples), err)
			}
			samples = append(samples, s)
		case 4: // location: id, line{function_id}
			var id uint64
			var fns []uint64
			err := eachField(v, func(num protowire.Number, typ protowire.Type, v []byte, x uint64) error {
				switch {
				case num == 1 && typ == protowire.VarintType:
					id = x
				case num == 4 && typ == protowire.BytesType:
					return eachField(v, func(num protowire.Number, typ protowire.Type, _ []byte, x uint64) error {
						if num == 1 && typ == protowire.VarintType {
							fns = append(fns, x)
						}
						return nil
					})
				}
				return nil
			})
			if err != nil {
				return fmt.Errorf("location %d: %w", len(locs), err)
			}
			locs[id] = fns
		case 5: // function: id, name, system_name, filename
			var id uint64
			var f function
			err := eachField(v, func(num protowire.Number, typ protowire.Type, _ []byte, x uint64) error {
				if typ != protowire.VarintType {
					return nil
				}
				switch num {
				case 1:
					id = x
				case 2:
					f.name = int64(x)
				case 4:
					f.file = int64(x)
				}
				return nil
			})
			if err != nil {
				return fmt.Errorf("function %d: %w", len(funcs), err)
			}
			funcs[id] = f
		case 6: // string_table
			strs = append(strs, string(v))
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("profile: %w", err)
	}
	str := func(i int64) (string, error) {
		if i < 0 || i >= int64(len(strs)) {
			return "", fmt.Errorf("profile: string %d of %d", i, len(strs))
		}
		return strs[i], nil
	}
	vi := 0
	for i, t := range types {
		if s, err := str(t.typ); err != nil {
			return nil, err
		} else if s == "samples" {
			vi = i
			break
		}
	}
	p := &Profile{Weights: map[string]int64{}, Files: map[string]string{}}
	names := map[uint64]string{}
	for id, f := range funcs {
		name, err := str(f.name)
		if err != nil {
			return nil, err
		}
		file, err := str(f.file)
		if err != nil {
			return nil, err
		}
		names[id] = name
		p.Files[name] = file
	}
	seen := map[string]int{} // function → the last sample (+1) it was counted in
	for i, s := range samples {
		if vi >= len(s.values) {
			return nil, fmt.Errorf("profile: sample %d has %d values, want value %d", i, len(s.values), vi+1)
		}
		w := int64(s.values[vi])
		if w < 0 || p.Total+w < p.Total {
			return nil, fmt.Errorf("profile: sample %d: weight %d overflows the total", i, s.values[vi])
		}
		p.Total += w
		for _, l := range s.locs {
			fns, ok := locs[l]
			if !ok {
				return nil, fmt.Errorf("profile: sample %d: no location %d", i, l)
			}
			for _, fn := range fns {
				name, ok := names[fn]
				if !ok {
					return nil, fmt.Errorf("profile: location %d: no function %d", l, fn)
				}
				if seen[name] != i+1 {
					seen[name] = i + 1
					p.Weights[name] += w
				}
			}
		}
	}
	return p, nil
}

// eachField calls fn with each field of the message b: its number, wire
// type, and its bytes (BytesType) or value (VarintType, fixed types).
func eachField(b []byte, fn func(num protowire.Number, typ protowire.Type, v []byte, x uint64) error) error {
	for len(b) > 0 {
		num, typ, n := protowire.ConsumeTag(b)
		if n < 0 {
			return protowire.ParseError(n)
		}
		b = b[n:]
		var v []byte
		var x uint64
		switch typ {
		case protowire.VarintType:
			x, n = protowire.ConsumeVarint(b)
		case protowire.BytesType:
			v, n = protowire.ConsumeBytes(b)
		case protowire.Fixed32Type:
			var x32 uint32
			x32, n = protowire.ConsumeFixed32(b)
			x = uint64(x32)
		case protowire.Fixed64Type:
			x, n = protowire.ConsumeFixed64(b)
		default:
			n = protowire.ConsumeFieldValue(num, typ, b)
		}
		if n < 0 {
			return fmt.Errorf("field %d: %w", num, protowire.ParseError(n))
		}
		b = b[n:]
		if err := fn(num, typ, v, x); err != nil {
			return err
		}
	}
	return nil
}

// appendVarints appends a repeated varint field's value(s): one varint, or
// a packed run of them.
func appendVarints(dst *[]uint64, typ protowire.Type, v []byte, x uint64) error {
	switch typ {
	case protowire.VarintType:
		*dst = append(*dst, x)
	case protowire.BytesType:
		for len(v) > 0 {
			x, n := protowire.ConsumeVarint(v)
			if n < 0 {
				return fmt.Errorf("packed varints: %w", protowire.ParseError(n))
			}
			*dst = append(*dst, x)
			v = v[n:]
		}
	}
	return nil
}
