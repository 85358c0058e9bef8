package toon

import (
	"reflect"
	"strconv"
	"strings"
	"sync"
)

func appendInt(dst []byte, n int64) []byte { return strconv.AppendInt(dst, n, 10) }

// structField is one encodable field of a struct type.
type structField struct {
	name      string
	key       []byte // name encoded as a TOON key (quoted if needed)
	index     []int  // path through embedded structs
	typ       reflect.Type
	omitEmpty bool
}

// structInfo is the field list of a struct type, computed once.
type structInfo struct {
	fields []structField
	byName map[string]int
}

var structCache sync.Map // reflect.Type -> *structInfo

// cachedStruct returns t's fields, following encoding/json's rules: the
// `toon` tag wins over the `json` tag; "-" skips the field; unexported
// fields are skipped; fields of untagged embedded structs are promoted
// unless a shallower field has the same name.
func cachedStruct(t reflect.Type) *structInfo {
	if si, ok := structCache.Load(t); ok {
		return si.(*structInfo)
	}
	si := &structInfo{byName: map[string]int{}}
	collectFields(si, t, nil, 0)
	v, _ := structCache.LoadOrStore(t, si)
	return v.(*structInfo)
}

func collectFields(si *structInfo, t reflect.Type, index []int, depth int) {
	if depth > 8 {
		return
	}
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		tag, ok := f.Tag.Lookup("toon")
		if !ok {
			tag = f.Tag.Get("json")
		}
		if tag == "-" {
			continue
		}
		name, opts, _ := strings.Cut(tag, ",")
		idx := append(append([]int(nil), index...), i)
		if f.Anonymous && name == "" && f.Type.Kind() == reflect.Struct {
			collectFields(si, f.Type, idx, depth+1)
			continue
		}
		if !f.IsExported() {
			continue
		}
		if name == "" {
			name = f.Name
		}
		if j, dup := si.byName[name]; dup {
			if len(si.fields[j].index) <= len(idx) {
				continue // the shallower field wins
			}
		}
		sf := structField{
			name:      name,
			key:       appendKey(nil, name),
			index:     idx,
			typ:       f.Type,
			omitEmpty: strings.Contains(","+opts+",", ",omitempty,"),
		}
		if j, dup := si.byName[name]; dup {
			si.fields[j] = sf
			continue
		}
		si.byName[name] = len(si.fields)
		si.fields = append(si.fields, sf)
	}
}

// find returns the index of a field by exact name, then matched
// case-insensitively as encoding/json does, or -1.
func (si *structInfo) find(name string) int {
	if len(si.fields) <= 8 { // comparing a few strings beats hashing
		for i := range si.fields {
			if si.fields[i].name == name {
				return i
			}
		}
	} else if i, ok := si.byName[name]; ok {
		return i
	}
	for i := range si.fields {
		if strings.EqualFold(si.fields[i].name, name) {
			return i
		}
	}
	return -1
}

// fieldByIndex returns v's field at path; promoted fields are only
// collected through embedded structs, never pointers, so no nil is in the way.
func fieldByIndex(v reflect.Value, path []int) reflect.Value {
	if len(path) == 1 {
		return v.Field(path[0])
	}
	return v.FieldByIndex(path)
}

// isEmptyValue is encoding/json's omitempty test.
func isEmptyValue(v reflect.Value) bool {
	switch v.Kind() {
	case reflect.Array, reflect.Map, reflect.Slice, reflect.String:
		return v.Len() == 0
	case reflect.Bool,
		reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr,
		reflect.Float32, reflect.Float64,
		reflect.Interface, reflect.Pointer:
		return v.IsZero()
	}
	return false
}
