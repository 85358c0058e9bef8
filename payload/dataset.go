package payload

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/wirebench/wirebench/api"
	"github.com/wirebench/wirebench/codec"
	"github.com/wirebench/wirebench/toon"
)

// A Dataset is the user's records, served by the reference server at
// /records and /records/{key} (serve --data) and checked by the load
// client against the same file: each record is held once as read (a
// Value) and once per served format as the Go value that format's codec
// encodes — the same codecs, in the same generic models, as the payload
// lab measures, but for JSON's numbers, read as json.Number. A record a
// format cannot give back as it was (an integer past 64 bits, a field the
// schema lacks, a null that protobuf drops) is refused when the dataset
// is loaded, with its index and the change, never served wrong.
//
// Safe for concurrent use.
type Dataset struct {
	// Key is the member naming each record (/records/{key}).
	Key string
	// File is where the records came from.
	File string
	// keyNumber: the keys are integers (else strings).
	keyNumber bool
	// Formats are the codec names served, in order; notServed says why
	// each other format is not.
	formats   []*format
	byName    map[string]*format
	notServed map[string]string
	list      *listModel // protobuf's list message, with a schema
	schema    *Schema

	mu   sync.RWMutex
	recs []*record          // in file order, created ones after
	idx  map[string]*record // by key
	// snap holds the list value of each format, rebuilt after a write.
	snap map[string]any
	// originals are the records as loaded (the client's reference), and
	// byOrig by key.
	originals []*record
	byOrig    map[string]*record
}

type record struct {
	key string
	val Value
	// goVal is the value each format encodes, by format name.
	goVal map[string]any
}

// Data formats: the codec names a dataset can be served in.
var DataFormats = []string{"json", "json-fast", "toon", "cbor", "msgpack", "protobuf"}

// DataOptions configure LoadDataset; the zero value is the default.
type DataOptions struct {
	// Key names the key member; empty picks "id" when every record has a
	// unique one, else the first member that is a unique string or
	// integer in every record.
	Key string
	// Formats are the codec names to serve (DataFormats); nil: every one
	// the dataset can be (protobuf only with a Schema).
	Formats []string
	Schema  *Schema
	// MaxRecords bounds the records (DefaultMaxRecords when 0).
	MaxRecords int
	// Input, MaxFileSize, MaxSample and MaxDepth are the lab's (Options).
	Input       string
	MaxFileSize int64
	MaxSample   int
	MaxDepth    int
}

// DefaultMaxRecords bounds a dataset: it is held in memory once per
// format, and a list response holds every record.
const DefaultMaxRecords = 100_000

// ErrData is a dataset that cannot be served: every error of LoadDataset
// wraps it (and ErrInput for a file that cannot be read), naming the
// record by its index and, for a format that cannot represent it, the
// path and the change.
var ErrData = errors.New("cannot serve the data")

// listMember is the one member of a list response: {"records": [...]}.
const listMember = "records"

// LoadDataset reads the records of path (a JSON array, JSON lines, or a
// document whose only member is an array of them; HAR and request logs
// as the payload lab reads them) and checks that every served format
// gives each record, and the list of all of them, back unchanged.
func LoadDataset(path string, o DataOptions) (*Dataset, error) {
	lo := Options{Input: o.Input, MaxFileSize: o.MaxFileSize, MaxSample: o.MaxSample, MaxDepth: o.MaxDepth}
	lo.fill()
	if o.MaxRecords <= 0 {
		o.MaxRecords = DefaultMaxRecords
	}
	res := &reservoir{n: o.MaxRecords + 1, rng: rand.New(rand.NewPCG(1, 2))}
	if _, err := readInputs([]string{path}, &lo, res, newShapeAcc()); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrData, err)
	}
	samples := res.kept
	if len(samples) > o.MaxRecords {
		return nil, fmt.Errorf("%w: %s: more than %d records (--data-max)", ErrData, path, o.MaxRecords)
	}
	// One document whose only member is an array of objects is a list
	// response: its elements are the records.
	if len(samples) == 1 && samples[0].Val.Kind == Object && len(samples[0].Val.Obj) == 1 && samples[0].Val.Obj[0].Val.Kind == Array {
		s0 := samples[0]
		samples = nil
		for i, e := range s0.Val.Obj[0].Val.Arr {
			samples = append(samples, Sample{File: s0.File, Index: i, Val: e})
		}
		if len(samples) > o.MaxRecords {
			return nil, fmt.Errorf("%w: %s: more than %d records (--data-max)", ErrData, path, o.MaxRecords)
		}
	}
	if len(samples) == 0 {
		return nil, fmt.Errorf("%w: %s: no records", ErrData, path)
	}
	for i := range samples {
		if samples[i].Val.Kind != Object {
			return nil, fmt.Errorf("%w: %s is a %v; a record is a JSON object", ErrData, recWhere(&samples[i]), samples[i].Val.Kind)
		}
	}
	d := &Dataset{File: path, byName: map[string]*format{}, notServed: map[string]string{}, idx: map[string]*record{}}
	if err := d.pickKey(samples, o.Key); err != nil {
		return nil, err
	}
	if err := d.pickFormats(o); err != nil {
		return nil, err
	}
	for i := range samples {
		s := &samples[i]
		r, err := d.newRecord(s.Val)
		if err != nil {
			return nil, fmt.Errorf("%w: %s: %w", ErrData, recWhere(s), err)
		}
		if _, dup := d.idx[r.key]; dup {
			return nil, fmt.Errorf("%w: %s: key %s=%s again", ErrData, recWhere(s), d.Key, r.key)
		}
		d.recs = append(d.recs, r)
		d.idx[r.key] = r
	}
	d.originals = slices.Clone(d.recs)
	d.byOrig = maps.Clone(d.idx)
	// The list of every record must come back too (TOON's tabular form,
	// protobuf's list message).
	all := make([]Value, len(d.recs))
	for i, r := range d.recs {
		all[i] = r.val
	}
	want := ListValue(all)
	for _, f := range d.formats {
		b, err := f.codec.Marshal(d.listValue(f))
		if err == nil {
			err = d.check(d.listFormat(f), b, want)
		}
		if err != nil {
			return nil, fmt.Errorf("%w: %s: the list of all %d records in %s: %w", ErrData, path, len(all), f.name, err)
		}
	}
	return d, nil
}

// pickKey sets d.Key and checks that every record has a usable, unique
// one.
func (d *Dataset) pickKey(samples []Sample, key string) error {
	usable := func(k string) (int, string) { // the first sample that cannot use k, and why
		seen := map[string]bool{}
		num := -1
		for i := range samples {
			v, ok := member(samples[i].Val, k)
			if !ok {
				return i, "has no member " + strconv.Quote(k)
			}
			ks, isNum, err := keyString(v)
			if err != nil {
				return i, err.Error()
			}
			if num == -1 {
				num = map[bool]int{false: 0, true: 1}[isNum]
			} else if (num == 1) != isNum {
				return i, "its key is a " + v.Kind.String() + ", the others' are not"
			}
			if seen[ks] {
				return i, "its key " + ks + " is another record's too"
			}
			seen[ks] = true
		}
		d.keyNumber = num == 1
		return -1, ""
	}
	if key != "" {
		if i, why := usable(key); i >= 0 {
			return fmt.Errorf("%w: %s: %s (--data-key %s)", ErrData, recWhere(&samples[i]), why, key)
		}
		d.Key = key
		return nil
	}
	cands := []string{"id"}
	for _, m := range samples[0].Val.Obj {
		if m.Key != "id" {
			cands = append(cands, m.Key)
		}
	}
	for _, k := range cands {
		if i, _ := usable(k); i < 0 {
			d.Key = k
			return nil
		}
	}
	return fmt.Errorf("%w: %s: no member is a unique string or integer in every record: name the key with --data-key", ErrData, d.File)
}

// keyString is a key's spelling in a path: an integer's digits or a
// string, refused when it could not be one path segment.
func keyString(v Value) (string, bool, error) {
	switch v.Kind {
	case Number:
		if !isInteger(v.Str) {
			return "", false, fmt.Errorf("its key %s is not an integer", v.Str)
		}
		n, err := strconv.ParseInt(v.Str, 10, 64)
		if err != nil {
			return "", false, fmt.Errorf("its key %s is past int64", v.Str)
		}
		// As the formats write it and a path names it: -0 is 0.
		return strconv.FormatInt(n, 10), true, nil
	case String:
		s := v.Str
		// "." and "..": a URL's path is cleaned of them, so no request
		// could name the record.
		if s == "" || s == "." || s == ".." || len(s) > 256 || !utf8.ValidString(s) || strings.ContainsAny(s, "/?#%\\") || strings.ContainsFunc(s, func(r rune) bool { return r < 0x20 || r == 0x7f }) {
			return "", false, fmt.Errorf("its key %s cannot be a path segment (empty, . or .., over 256 bytes, or with / ? # %% \\ or a control character)", short(v))
		}
		return s, false, nil
	}
	return "", false, fmt.Errorf("its key is a %v (want a string or an integer)", v.Kind)
}

func member(v Value, key string) (Value, bool) {
	var out Value
	found := false
	for _, m := range v.Obj {
		if m.Key == key {
			out, found = m.Val, true // the last of duplicates, as JSON.parse
		}
	}
	return out, found
}

func (d *Dataset) pickFormats(o DataOptions) error {
	want := o.Formats
	if want == nil {
		want = DataFormats
	}
	for _, n := range want {
		if !slices.Contains(DataFormats, n) {
			return fmt.Errorf("%w: format %q (want %s)", ErrData, n, strings.Join(DataFormats, ", "))
		}
	}
	all := genericFormats()
	for _, f := range all {
		if f.name == "json" || f.name == "json-fast" {
			// A server holding the user's records keeps their numbers as
			// written (a Go server's int64 fields would): an integer past
			// 2^53 is served and checked exactly, where the lab's generic
			// float64 would round it.
			c := f.codec
			f.decode = func(data []byte) (any, error) {
				var v any
				err := codec.UnmarshalNumbers(c, data, &v)
				return v, err
			}
			f.how = "map[string]any, numbers as json.Number (exact digits)"
		}
	}
	if o.Schema != nil {
		f := o.Schema.format()
		all = append(all, f)
		l, err := newListModel(o.Schema)
		if err != nil {
			return fmt.Errorf("%w: %w", ErrData, err)
		}
		d.list, d.schema = l, o.Schema
	}
	for _, f := range all {
		if slices.Contains(want, f.name) {
			d.formats = append(d.formats, f)
			d.byName[f.name] = f
		} else {
			d.notServed[f.name] = "not among the formats served (--data-formats)"
		}
	}
	if o.Schema == nil {
		if o.Formats != nil && slices.Contains(o.Formats, "protobuf") {
			return fmt.Errorf("%w: protobuf needs a schema (--proto FILE.proto --message pkg.Msg)", ErrData)
		}
		d.notServed["protobuf"] = "no schema (--proto FILE.proto --message pkg.Msg)"
	}
	if len(d.formats) == 0 {
		return fmt.Errorf("%w: no format to serve", ErrData)
	}
	return nil
}

// newRecord checks v in every served format and keeps its Go values.
func (d *Dataset) newRecord(v Value) (*record, error) {
	kv, ok := member(v, d.Key)
	if !ok {
		return nil, fmt.Errorf("no member %q (the key)", d.Key)
	}
	ks, isNum, err := keyString(kv)
	if err != nil {
		return nil, err
	}
	if isNum != d.keyNumber {
		return nil, fmt.Errorf("its key is a %v, the dataset's are not", kv.Kind)
	}
	r := &record{key: ks, val: v, goVal: make(map[string]any, len(d.formats))}
	for _, f := range d.formats {
		in, err := f.toGo(v)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", f.name, stripSchema(err))
		}
		b, err := f.codec.Marshal(in)
		if err != nil {
			return nil, fmt.Errorf("%s cannot encode it: %w", f.name, err)
		}
		if err := d.check(f, b, v); err != nil {
			return nil, fmt.Errorf("%s: %w", f.name, err)
		}
		r.goVal[f.name] = in
	}
	return r, nil
}

func stripSchema(err error) error {
	if errors.Is(err, errSchema) {
		return errors.New(strings.TrimPrefix(err.Error(), errSchema.Error()+": "))
	}
	return err
}

// check decodes b in f and compares it with want: only changes that keep
// the value pass (key order, a number's or timestamp's spelling, a 64-bit
// integer as a string of its digits in protobuf's JSON mapping), and, in
// protobuf, a member equal to its field's default coming back missing
// (proto3 does not tell them apart).
func (d *Dataset) check(f *format, b []byte, want Value) error {
	x, err := f.decode(b)
	if err != nil {
		return fmt.Errorf("cannot decode its own encoding: %w", err)
	}
	backs, err := f.readBack(x)
	if err != nil {
		return err
	}
	ch := newChangesFor(f)
	ch.compare(want, closest(want, backs, f.intString))
	for _, c := range ch.list() {
		if c.Spelling || f.name == "protobuf" && c.Kind == ChangeZeroDropped {
			continue
		}
		return fmt.Errorf("%s: %s: %s came back as %s", c.Path, c.Kind, c.Before, c.After)
	}
	return nil
}

// listValue is the list response of every record in f's model.
func (d *Dataset) listValue(f *format) any {
	if v, ok := d.snap[f.name]; ok {
		return v
	}
	var v any
	switch f.name {
	case "protobuf":
		v = d.list.message(d.recs)
	case "toon":
		a := make([]any, len(d.recs))
		for i, r := range d.recs {
			a[i] = r.goVal[f.name]
		}
		v = toon.Object{{Key: listMember, Value: a}}
	default:
		a := make([]any, len(d.recs))
		for i, r := range d.recs {
			a[i] = r.goVal[f.name]
		}
		v = map[string]any{listMember: a}
	}
	if d.snap == nil {
		d.snap = map[string]any{}
	}
	d.snap[f.name] = v
	return v
}

// ListValue is the list response's value for records: {"records": [...]}.
func ListValue(records []Value) Value {
	return Value{Kind: Object, Obj: []Member{{Key: listMember, Val: Value{Kind: Array, Arr: records}}}}
}

// served returns format's model, or an api error saying why it is not
// served.
func (d *Dataset) served(format string) (*format, error) {
	if f, ok := d.byName[format]; ok {
		return f, nil
	}
	why, ok := d.notServed[format]
	if !ok {
		why = "not a format of the dataset"
	}
	return nil, fmt.Errorf("%w: the dataset is not served in %s: %s", api.ErrNotAcceptable, format, why)
}

// The server's side: the methods the REST API's /records routes call
// (httpapi.Records). format is the codec's name; values returned are
// encoded by that codec and must not be modified.

// List is every record, in the order read and created.
func (d *Dataset) List(format string) (any, error) {
	f, err := d.served(format)
	if err != nil {
		return nil, err
	}
	d.mu.RLock()
	if v, ok := d.snap[format]; ok {
		d.mu.RUnlock()
		return v, nil
	}
	d.mu.RUnlock()
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.listValue(f), nil
}

// Get is the record of key.
func (d *Dataset) Get(key, format string) (any, error) {
	f, err := d.served(format)
	if err != nil {
		return nil, err
	}
	d.mu.RLock()
	defer d.mu.RUnlock()
	r, ok := d.idx[key]
	if !ok {
		return nil, fmt.Errorf("record %q: %w", key, api.ErrNotFound)
	}
	return r.goVal[f.name], nil
}

// Create stores the record in body (format in), which must have a key no
// record has, and returns it in format out.
func (d *Dataset) Create(body []byte, in, out string) (any, error) {
	return d.write("", body, in, out)
}

// Put replaces the record of key with the one in body, whose key must be
// key (or absent: it is then key).
func (d *Dataset) Put(key string, body []byte, in, out string) (any, error) {
	return d.write(key, body, in, out)
}

// Update replaces the record whose key the record in body has (gRPC's
// Update: the message carries its key, there is no path).
func (d *Dataset) Update(body []byte, in, out string) (any, error) {
	return d.write(keyInBody, body, in, out)
}

// keyInBody is write's key for Update: the body's own, which must exist.
const keyInBody = "\x00body"

func (d *Dataset) write(key string, body []byte, in, out string) (any, error) {
	fi, err := d.served(in)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", api.ErrUnsupportedType, err)
	}
	fo, err := d.served(out)
	if err != nil {
		return nil, err
	}
	x, err := fi.decode(body)
	if err != nil {
		return nil, fmt.Errorf("%w: %s body: %v", api.ErrMalformed, fi.name, err)
	}
	backs, err := fi.readBack(x)
	if err != nil {
		return nil, fmt.Errorf("%w: %s body: %v", api.ErrMalformed, fi.name, err)
	}
	v := d.pickReading(backs)
	if fi.name == "protobuf" {
		v = numbers(d.schema.md, v)
	}
	if v.Kind != Object {
		return nil, fmt.Errorf("%w: a record is an object, not a %v", api.ErrInvalid, v.Kind)
	}
	if key != "" && key != keyInBody {
		if kv, ok := member(v, d.Key); !ok {
			kv = Value{Kind: String, Str: key}
			if d.keyNumber {
				kv.Kind = Number
			}
			v.Obj = append(slices.Clone(v.Obj), Member{Key: d.Key, Val: kv})
		} else if ks, _, err := keyString(kv); err != nil || ks != key {
			return nil, fmt.Errorf("%w: the body's %s is not the path's %q", api.ErrInvalid, d.Key, key)
		}
	}
	r, err := d.newRecord(v)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", api.ErrInvalid, err)
	}
	if key == keyInBody {
		key = r.key
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	old, exists := d.idx[r.key]
	switch {
	case key == "" && exists:
		return nil, fmt.Errorf("%w: a record with %s %s exists", api.ErrInvalid, d.Key, r.key)
	case key != "" && !exists:
		return nil, fmt.Errorf("record %q: %w", key, api.ErrNotFound)
	case exists:
		i := slices.Index(d.recs, old)
		d.recs[i] = r
	default:
		d.recs = append(d.recs, r)
	}
	d.idx[r.key] = r
	d.snap = nil
	return r.goVal[fo.name], nil
}

// Delete removes the record of key.
func (d *Dataset) Delete(key string) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	r, ok := d.idx[key]
	if !ok {
		return fmt.Errorf("record %q: %w", key, api.ErrNotFound)
	}
	delete(d.idx, key)
	d.recs = slices.DeleteFunc(d.recs, func(x *record) bool { return x == r })
	d.snap = nil
	return nil
}

// pickReading chooses among a decoder's readings (protojson's two key
// spellings) the one spelling the key as the dataset does.
func (d *Dataset) pickReading(backs []Value) Value {
	for _, b := range backs {
		if _, ok := member(b, d.Key); ok {
			return b
		}
	}
	return backs[0]
}

// The client's side: what the load scenario sends and checks.

// Len is the number of records loaded.
func (d *Dataset) Len() int { return len(d.originals) }

// Record is the i-th record loaded and its key.
func (d *Dataset) Record(i int) (key string, v Value) {
	r := d.originals[i]
	return r.key, r.val
}

// Formats are the codec names served.
func (d *Dataset) Formats() []string {
	out := make([]string, len(d.formats))
	for i, f := range d.formats {
		out[i] = f.name
	}
	return out
}

// NotServed says, for each format the dataset is not served in, why.
func (d *Dataset) NotServed() map[string]string { return d.notServed }

// WithKey is record v with its key replaced by n's: a new key no loaded
// record has (the largest integer key + n, or the first record's key +
// "~" + n): the same for every record given the same n.
func (d *Dataset) WithKey(v Value, n int) (key string, out Value) {
	var kv Value
	if d.keyNumber {
		hi := int64(0)
		for _, r := range d.originals {
			k, _ := strconv.ParseInt(r.key, 10, 64)
			hi = max(hi, k)
		}
		key = strconv.FormatInt(hi+int64(n), 10)
		kv = Value{Kind: Number, Str: key}
	} else {
		base := d.originals[0].key
		for key = base + "~" + strconv.Itoa(n); d.byOrig[key] != nil; key = base + "~" + strconv.Itoa(n) {
			base += "~" // a record of the file has that key already
		}
		kv = Value{Kind: String, Str: key}
	}
	out = Value{Kind: Object, Obj: slices.Clone(v.Obj)}
	for i := range out.Obj {
		if out.Obj[i].Key == d.Key {
			out.Obj[i].Val = kv
		}
	}
	return key, out
}

// Encode encodes record v in format (the request bodies), refusing one
// the format cannot give back unchanged.
func (d *Dataset) Encode(format string, v Value) ([]byte, error) {
	f, err := d.served(format)
	if err != nil {
		return nil, err
	}
	in, err := f.toGo(v)
	if err != nil {
		return nil, stripSchema(err)
	}
	b, err := f.codec.Marshal(in)
	if err != nil {
		return nil, err
	}
	return b, d.check(f, b, v)
}

// Check decodes body, a response in format, and compares it with want.
func (d *Dataset) Check(format string, body []byte, want Value) error {
	f, err := d.served(format)
	if err != nil {
		return err
	}
	return d.check(f, body, want)
}

// CheckList decodes body, a list response in format, and checks that it
// holds every loaded record unchanged and at most extra others (records
// being created by other clients), each keyed.
func (d *Dataset) CheckList(format string, body []byte, extra int) error {
	f, err := d.served(format)
	if err != nil {
		return err
	}
	if f.name == "protobuf" && d.protoListEqual(body, extra) {
		return nil
	}
	f = d.listFormat(f)
	x, err := f.decode(body)
	if err != nil {
		return fmt.Errorf("cannot decode: %w", err)
	}
	backs, err := f.readBack(x)
	if err != nil {
		return err
	}
	var list Value
	for _, b := range backs { // the reading that spells the key as the dataset does
		if l, ok := member(b, listMember); ok && l.Kind == Array {
			if _, keyed := member(firstOr(l.Arr), d.Key); keyed || list.Kind != Array {
				list = l
			}
		}
	}
	if list.Kind != Array {
		return fmt.Errorf("no %q array in the list", listMember)
	}
	found := 0
	others := 0
	for _, e := range list.Arr {
		kv, ok := member(e, d.Key)
		if !ok {
			return fmt.Errorf("a record without its key %q", d.Key)
		}
		ks, _, _ := keyString(kv)
		if kv.Kind == String && d.keyNumber {
			ks = kv.Str // protojson's int64 as a string
		}
		r, orig := d.byOrig[ks]
		if !orig {
			others++
			continue
		}
		ch := newChangesFor(f)
		ch.compare(r.val, e)
		for _, c := range ch.list() {
			if c.Spelling || f.name == "protobuf" && c.Kind == ChangeZeroDropped {
				continue
			}
			return fmt.Errorf("record %s=%s: %s: %s: %s came back as %s", d.Key, ks, c.Path, c.Kind, c.Before, c.After)
		}
		found++
	}
	if found != len(d.originals) {
		return fmt.Errorf("%d of the %d records in the list", found, len(d.originals))
	}
	if others > extra {
		return fmt.Errorf("%d records beyond the dataset, more than the %d being created", others, extra)
	}
	return nil
}

// LoadDatasetFile is LoadDataset with the schema compiled from a .proto
// (or read from a protoset when protoset is true) first; an empty schema
// path means none.
func LoadDatasetFile(ctx context.Context, path, schemaPath string, protoset bool, message string, o DataOptions) (*Dataset, error) {
	if schemaPath != "" {
		var err error
		if protoset {
			o.Schema, err = LoadProtoset(schemaPath, message)
		} else {
			o.Schema, err = CompileProto(ctx, schemaPath, nil, message)
		}
		if err != nil {
			return nil, fmt.Errorf("%w: %w", ErrData, err)
		}
	}
	return LoadDataset(path, o)
}

func firstOr(a []Value) Value {
	if len(a) == 0 {
		return Value{}
	}
	return a[0]
}

// recWhere names a record for messages: "orders.jsonl:12: record 11"
// (0-based, as the file's array would index it).
func recWhere(s *Sample) string {
	if s.Line > 0 {
		return fmt.Sprintf("%s:%d: record %d", s.File, s.Line, s.Index)
	}
	return fmt.Sprintf("%s: record %d", s.File, s.Index)
}
