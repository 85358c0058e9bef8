package toon

// Object is a TOON object with its key order, the generic form that
// decoding into an `any` produces. Keys are expected to be unique; the
// decoder guarantees it (strict mode rejects duplicates, lenient mode keeps
// the last value in the first key's position).
type Object []Member

// Member is one key and its value: nil, bool, string, Number, Object or
// []any, or, when encoding, any value Marshal accepts.
type Member struct {
	Key   string
	Value any
}

// Get returns the value stored under key.
func (o Object) Get(key string) (any, bool) {
	for i := range o {
		if o[i].Key == key {
			return o[i].Value, true
		}
	}
	return nil, false
}

// index returns the position of key, or -1.
func (o Object) index(key string) int {
	for i := range o {
		if o[i].Key == key {
			return i
		}
	}
	return -1
}

// set replaces the value under key or appends a member, giving the
// last-write-wins resolution of spec §14.3 while keeping first position.
func (o *Object) set(key string, v any) {
	if i := o.index(key); i >= 0 {
		(*o)[i].Value = v
		return
	}
	*o = append(*o, Member{key, v})
}
