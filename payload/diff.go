package payload

import (
	"encoding/base64"
	"math/big"
	"slices"
	"strconv"
	"strings"
	"time"

	"google.golang.org/protobuf/reflect/protoreflect"

	"github.com/wirebench/wirebench/results"
)

// Kinds of change a round trip can make. The spelling kinds keep the value.
const (
	ChangeBigInt       = "int past 2^53"      // an integer beyond float64's exact range came back different
	ChangeNumber       = "number"             // another number came back with another value
	ChangeFloatSpell   = "float spelling"     // same number, other digits (1.0 → 1, 1e5 → 100000)
	ChangeIntAsString  = "int64 as string"    // a 64-bit integer came back as a string of the same digits
	ChangeKeyOrder     = "key order"          // an object's keys came back in another order
	ChangeNullMissing  = "null vs missing"    // a null member came back missing, or the reverse
	ChangeZeroDropped  = "zero dropped"       // a zero, "" or false member came back missing
	ChangeDefaultAdded = "default added"      // a missing member came back as its zero value
	ChangeDuplicateKey = "duplicate key"      // a key written twice came back once
	ChangeBytes        = "byte string"        // a string came back as bytes
	ChangeBase64Spell  = "base64 spelling"    // the same bytes in base64 spelled otherwise (padding, URL-safe)
	ChangeTimeSpell    = "timestamp spelling" // the same instant written otherwise
	ChangeTimeValue    = "timestamp"          // a timestamp came back as another instant (precision lost)
	ChangeDurSpell     = "duration spelling"  // the same protobuf Duration written otherwise ("3.5s" → "3.500s")
	ChangeEnumSpell    = "enum spelling"      // an enum's number came back as its name (protobuf's JSON mapping)
	ChangeType         = "type"               // a value came back as another JSON type
	ChangeString       = "string"             // a string came back with other characters
	ChangeMissing      = "member lost"        // a member came back missing
	ChangeExtra        = "member added"       // a member came back that was not there
	ChangeLength       = "array length"       // an array came back with another length
	ChangeEncode       = "cannot encode"      // the format refused the sample
	ChangeDecode       = "cannot decode"      // the format could not read its own encoding
)

// spelling reports the change kinds that keep the value.
func spelling(kind string) bool {
	switch kind {
	case ChangeFloatSpell, ChangeIntAsString, ChangeKeyOrder, ChangeTimeSpell, ChangeDurSpell, ChangeBase64Spell, ChangeEnumSpell:
		return true
	}
	return false
}

// changes counts a format's round-trip changes, keeping each kind's first.
type changes struct {
	order   []string
	byKind  map[string]*results.PayloadChange
	sample  int
	path    []string
	changed bool
	// intString: see format.intString.
	intString bool
	// msg is the schema's message the samples are, to tell an enum's
	// default or its number from another value; nil without a schema.
	msg protoreflect.MessageDescriptor
	// total counts every change added.
	total int
}

func newChanges() *changes { return &changes{byKind: map[string]*results.PayloadChange{}} }

// newChangesFor is newChanges for f's round trip.
func newChangesFor(f *format) *changes {
	c := newChanges()
	c.intString, c.msg = f.intString, f.msg
	return c
}

// enumHere is the enum field whose value is at c.path in the schema's
// message, or nil (no schema, not an enum, a path the schema lacks).
func (c *changes) enumHere() protoreflect.FieldDescriptor {
	if c.msg == nil {
		return nil
	}
	md := c.msg
	var fd protoreflect.FieldDescriptor
	atList := false // fd is a repeated field and the path is at the list itself
	for _, seg := range c.path {
		var key string
		switch {
		case strings.HasPrefix(seg, "."):
			key = seg[1:]
		case strings.HasPrefix(seg, `["`):
			k, err := strconv.Unquote(seg[1 : len(seg)-1])
			if err != nil {
				return nil
			}
			key = k
		default: // "[i]": an element of fd's list
			if fd == nil || !atList {
				return nil
			}
			atList = false
			continue
		}
		if fd != nil && fd.IsMap() {
			fd = fd.MapValue() // key is the map's key
		} else {
			if md == nil {
				return nil
			}
			fields := md.Fields()
			if fd = fields.ByJSONName(key); fd == nil {
				if fd = fields.ByName(protoreflect.Name(key)); fd == nil {
					return nil
				}
			}
			atList = fd.IsList()
		}
		md = fd.Message()
	}
	if fd == nil || atList || fd.IsMap() || fd.Kind() != protoreflect.EnumKind {
		return nil
	}
	return fd
}

func (c *changes) enumDefaultHere(w Value) bool {
	fd := c.enumHere()
	return fd != nil && enumDefault(fd, w)
}

// enumDefault reports whether w is the default of the enum field fd, by
// name or number: what proto3 leaves out.
func enumDefault(fd protoreflect.FieldDescriptor, w Value) bool {
	n := fd.Default().Enum()
	switch w.Kind {
	case String:
		v := fd.Enum().Values().ByNumber(n)
		return v != nil && string(v.Name()) == w.Str
	case Number:
		eq, _ := numEqual(w.Str, strconv.Itoa(int(n)))
		return eq
	}
	return false
}

// enumName reports whether the number w came back as got, its name in
// the enum field fd.
func enumName(fd protoreflect.FieldDescriptor, w, got Value) bool {
	if !isInteger(w.Str) {
		return false
	}
	n, err := strconv.ParseInt(w.Str, 10, 32)
	if err != nil {
		return false
	}
	v := fd.Enum().Values().ByNumber(protoreflect.EnumNumber(n))
	return v != nil && string(v.Name()) == got.Str
}

func (c *changes) add(kind string, before, after Value) {
	c.addText(kind, short(before), short(after))
}

func (c *changes) addText(kind, before, after string) {
	c.changed = true
	c.total++
	if ch, ok := c.byKind[kind]; ok {
		ch.Count++
		return
	}
	c.order = append(c.order, kind)
	c.byKind[kind] = &results.PayloadChange{
		Kind: kind, Spelling: spelling(kind), Count: 1, Sample: c.sample,
		Path: "$" + strings.Join(c.path, ""), Before: before, After: after,
	}
}

func (c *changes) list() []results.PayloadChange {
	out := make([]results.PayloadChange, 0, len(c.order))
	for _, k := range c.order {
		out = append(out, *c.byKind[k])
	}
	return out
}

func (c *changes) push(seg string) { c.path = append(c.path, seg) }
func (c *changes) pop()            { c.path = c.path[:len(c.path)-1] }

func keySeg(k string) string {
	if k != "" && isIdent(k) {
		return "." + k
	}
	return "[" + strconv.Quote(k) + "]"
}

func isIdent(s string) bool {
	for i, r := range s {
		if r == '_' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || i > 0 && r >= '0' && r <= '9' {
			continue
		}
		return false
	}
	return true
}

// compare records how got differs from want, the input sample.
func (c *changes) compare(want, got Value) {
	switch {
	case want.Kind == got.Kind:
	case want.Kind == String && got.Kind == Bytes:
		c.add(ChangeBytes, want, got)
		return
	case want.Kind == String && got.Kind == Time:
		c.compareTime(want, got)
		return
	case want.Kind == Number && got.Kind == String:
		if eq, _ := numEqual(want.Str, got.Str); eq && isInteger(got.Str) {
			if !isInteger(want.Str) {
				// 1.0 or 1e2 into a 64-bit integer field: its value,
				// spelled as the digits of an integer.
				c.add(ChangeFloatSpell, want, got)
			} else if !c.intString {
				c.add(ChangeIntAsString, want, got)
			}
			return
		}
		if fd := c.enumHere(); fd != nil && enumName(fd, want, got) {
			c.add(ChangeEnumSpell, want, got)
			return
		}
		c.add(ChangeType, want, got)
		return
	default:
		c.add(ChangeType, want, got)
		return
	}
	switch want.Kind {
	case Bool:
		if want.Bool != got.Bool {
			c.add(ChangeType, want, got)
		}
	case Number:
		if want.Str == got.Str {
			return
		}
		eq, _ := numEqual(want.Str, got.Str)
		switch {
		case eq:
			c.add(ChangeFloatSpell, want, got)
		case isInteger(want.Str) && pastFloat(want.Str):
			c.add(ChangeBigInt, want, got)
		default:
			c.add(ChangeNumber, want, got)
		}
	case String:
		if want.Str == got.Str {
			return
		}
		if _, err := decodeBase64(want.Str); err == nil {
			if b, err := decodeBase64(got.Str); err == nil && base64.StdEncoding.EncodeToString(b) == canonicalBase64(want.Str) {
				c.add(ChangeBase64Spell, want, got)
				return
			}
		}
		if t1, ok := parseTime(want.Str); ok {
			if t2, ok := parseTime(got.Str); ok {
				if t1.Equal(t2) {
					c.add(ChangeTimeSpell, want, got)
				} else {
					c.add(ChangeTimeValue, want, got)
				}
				return
			}
		}
		// protojson writes a Duration with 0, 3, 6 or 9 fraction digits,
		// whatever the input had: the same length of time.
		if d1, ok := parseDuration(want.Str); ok {
			if d2, ok := parseDuration(got.Str); ok && d1 == d2 {
				c.add(ChangeDurSpell, want, got)
				return
			}
		}
		c.add(ChangeString, want, got)
	case Array:
		if len(want.Arr) != len(got.Arr) {
			c.add(ChangeLength, want, got)
			return
		}
		for i := range want.Arr {
			c.push("[" + strconv.Itoa(i) + "]")
			c.compare(want.Arr[i], got.Arr[i])
			c.pop()
		}
	case Object:
		c.compareObject(want, got)
	}
}

// compareObject matches members by key. A key written twice counts once,
// with its last value (JSON.parse's reading).
func (c *changes) compareObject(want, got Value) {
	wantIdx := make(map[string]int, len(want.Obj))
	var wantKeys []string
	for i, m := range want.Obj {
		if _, dup := wantIdx[m.Key]; dup {
			c.push(keySeg(m.Key))
			c.add(ChangeDuplicateKey, m.Val, Value{Kind: String, Str: "(one member)"})
			c.pop()
		} else {
			wantKeys = append(wantKeys, m.Key)
		}
		wantIdx[m.Key] = i
	}
	gotIdx := make(map[string]int, len(got.Obj))
	for i, m := range got.Obj {
		gotIdx[m.Key] = i
	}
	// Key order first, so that the first example is the outermost object:
	// the keys both have, in the order each gives them.
	var common, gotOrder []string
	for _, k := range wantKeys {
		if _, ok := gotIdx[k]; ok {
			common = append(common, k)
		}
	}
	for _, m := range got.Obj {
		if _, ok := wantIdx[m.Key]; ok && (len(gotOrder) == 0 || gotOrder[len(gotOrder)-1] != m.Key) {
			gotOrder = append(gotOrder, m.Key)
		}
	}
	if !slices.Equal(common, gotOrder) {
		c.addText(ChangeKeyOrder, cut(strings.Join(common, ","), 60), cut(strings.Join(gotOrder, ","), 60))
	}
	for _, k := range wantKeys {
		w := want.Obj[wantIdx[k]].Val
		c.push(keySeg(k))
		switch gi, ok := gotIdx[k]; {
		case ok:
			c.compare(w, got.Obj[gi].Val)
		case w.Kind == Null:
			c.addText(ChangeNullMissing, short(w), missing)
		case isZero(w):
			c.addText(ChangeZeroDropped, short(w), missing)
		case c.enumDefaultHere(w):
			c.addText(ChangeZeroDropped, short(w), missing)
		default:
			c.addText(ChangeMissing, short(w), missing)
		}
		c.pop()
	}
	for _, m := range got.Obj {
		if _, ok := wantIdx[m.Key]; ok {
			continue
		}
		c.push(keySeg(m.Key))
		switch {
		case m.Val.Kind == Null:
			c.addText(ChangeNullMissing, missing, short(m.Val))
		case isZero(m.Val):
			c.addText(ChangeDefaultAdded, missing, short(m.Val))
		default:
			c.addText(ChangeExtra, missing, short(m.Val))
		}
		c.pop()
	}
}

// missing stands for a member that is not there.
const missing = "(missing)"

func (c *changes) compareTime(want, got Value) {
	t1, ok := parseTime(want.Str)
	t2, err := time.Parse(time.RFC3339Nano, got.Str)
	switch {
	case !ok || err != nil:
		c.add(ChangeType, want, got)
	case t1.Equal(t2):
		c.add(ChangeTimeSpell, want, got)
	default:
		c.add(ChangeTimeValue, want, got)
	}
}

func isZero(v Value) bool {
	switch v.Kind {
	case Bool:
		return !v.Bool
	case String, Bytes:
		return v.Str == ""
	case Number:
		eq, _ := numEqual(v.Str, "0")
		return eq
	case Array:
		return len(v.Arr) == 0
	case Object:
		return len(v.Obj) == 0
	}
	return false
}

// pastFloat reports an integer token whose magnitude is over 2^53, where
// float64 stops holding every integer.
func pastFloat(tok string) bool {
	t := strings.TrimPrefix(tok, "-")
	if len(t) < 16 {
		return false
	}
	if len(t) > 16 {
		return true
	}
	return t > "9007199254740992"
}

// numEqual compares two number spellings by value. Tokens too long or
// with too large an exponent to compare cheaply compare as text (ok false).
func numEqual(a, b string) (equal, ok bool) {
	if a == b {
		return true, true
	}
	if len(a) > 400 || len(b) > 400 || hugeExp(a) || hugeExp(b) {
		return false, false
	}
	fa, _, err1 := big.ParseFloat(a, 10, 512, big.ToNearestEven)
	fb, _, err2 := big.ParseFloat(b, 10, 512, big.ToNearestEven)
	if err1 != nil || err2 != nil {
		return false, false
	}
	return fa.Cmp(fb) == 0, true
}

func hugeExp(s string) bool {
	i := strings.IndexAny(s, "eE")
	if i < 0 {
		return false
	}
	e, err := strconv.Atoi(strings.TrimPrefix(s[i+1:], "+"))
	return err != nil || e > 10000 || e < -10000
}

// decodeBase64 reads standard or URL-safe base64, padded or not.
func decodeBase64(s string) ([]byte, error) {
	for _, enc := range []*base64.Encoding{base64.StdEncoding, base64.RawStdEncoding, base64.URLEncoding, base64.RawURLEncoding} {
		if b, err := enc.DecodeString(s); err == nil {
			return b, nil
		}
	}
	return nil, base64.CorruptInputError(0)
}

func canonicalBase64(s string) string {
	b, err := decodeBase64(s)
	if err != nil {
		return s
	}
	return base64.StdEncoding.EncodeToString(b)
}

// parseDuration reads a Duration in protobuf's JSON form ("-1.5s": seconds
// and up to 9 fraction digits), as nanoseconds beside the seconds, so that
// its range (±10,000 years) does not overflow.
func parseDuration(s string) ([2]int64, bool) {
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	s, ok := strings.CutSuffix(s, "s")
	if !ok {
		return [2]int64{}, false
	}
	whole, frac, _ := strings.Cut(s, ".")
	if whole == "" || len(whole) > 12 || len(frac) > 9 || strings.Contains(s, ".") && frac == "" {
		return [2]int64{}, false
	}
	digits := func(t string) bool {
		for i := range len(t) {
			if t[i] < '0' || t[i] > '9' {
				return false
			}
		}
		return true
	}
	if !digits(whole) || !digits(frac) {
		return [2]int64{}, false
	}
	sec, _ := strconv.ParseInt(whole, 10, 64)
	ns, _ := strconv.ParseInt((frac + "000000000")[:9], 10, 64)
	if neg {
		sec, ns = -sec, -ns
	}
	return [2]int64{sec, ns}, true
}

// parseTime reads an RFC 3339 timestamp.
func parseTime(s string) (time.Time, bool) {
	if len(s) < 20 || len(s) > 40 || s[4] != '-' {
		return time.Time{}, false
	}
	t, err := time.Parse(time.RFC3339Nano, s)
	return t, err == nil
}
