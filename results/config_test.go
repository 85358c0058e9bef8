package results

import (
	"bytes"
	"encoding/json"
	"os"
	"reflect"
	"slices"
	"testing"
)

// configOf is a configuration as a file holds it (JSON): the form old
// files have, read into the typed record.
func configOf(t testing.TB, js string) Config {
	t.Helper()
	var c Config
	if err := json.Unmarshal([]byte(js), &c); err != nil {
		t.Fatalf("config %s: %v", js, err)
	}
	return c
}

// TestNoUntypedFields: every result kind is typed records all the way
// down — no map[string]any and no interface field anywhere a reader of
// the Go API would have to probe.
func TestNoUntypedFields(t *testing.T) {
	t.Parallel()
	seen := map[reflect.Type]bool{}
	var walk func(typ reflect.Type, path string)
	walk = func(typ reflect.Type, path string) {
		switch typ.Kind() {
		case reflect.Interface:
			t.Errorf("%s is an interface (%v): give it a type", path, typ)
			return
		case reflect.Pointer, reflect.Slice, reflect.Array:
			walk(typ.Elem(), path+"[]")
			return
		case reflect.Map:
			walk(typ.Key(), path+"{key}")
			walk(typ.Elem(), path+"{}")
			return
		case reflect.Struct:
		default:
			return
		}
		if seen[typ] {
			return
		}
		seen[typ] = true
		for i := range typ.NumField() {
			f := typ.Field(i)
			if f.IsExported() {
				walk(f.Type, path+"."+f.Name)
			}
		}
	}
	for _, v := range []any{Study{}, Load{}, Capacity{}, PayloadLab{}} {
		walk(reflect.TypeOf(v), reflect.TypeOf(v).Name())
	}
	if len(seen) < 30 {
		t.Errorf("walked %d struct types: the walk did not reach the records", len(seen))
	}
}

// TestOldConfigReads: a result written when the configuration was an
// untyped map reads into the typed record with nothing lost, and written
// again holds the same keys and values.
func TestOldConfigReads(t *testing.T) {
	t.Parallel()
	b, err := os.ReadFile("testdata/load-v1.json")
	if err != nil {
		t.Fatal(err)
	}
	var old struct {
		Config map[string]any `json:"config"`
	}
	if err := json.Unmarshal(b, &old); err != nil {
		t.Fatal(err)
	}
	res, err := ReadLoad(bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	c := res.Config
	if c.Scenario != "raw" || len(c.Args) != 11 || !slices.Equal(c.Thresholds, []string{"p99<5s", "rps>1"}) ||
		c.Raw == nil || c.Raw.URL != "http://127.0.0.1:18392/users" || c.Raw.Transport != "http1" {
		t.Fatalf("config read %+v (raw %+v)", c, c.Raw)
	}
	out, err := json.Marshal(c)
	if err != nil {
		t.Fatal(err)
	}
	var back map[string]any
	if err := json.Unmarshal(out, &back); err != nil {
		t.Fatal(err)
	}
	delete(old.Config, "body_bytes") // 0: omitted now
	if !reflect.DeepEqual(back, old.Config) {
		t.Errorf("written again:\n%s\nwant the keys of\n%v", out, old.Config)
	}
}
