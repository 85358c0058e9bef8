package payload

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/wirebench/wirebench/api"
	"github.com/wirebench/wirebench/codec"
)

// orders are records of a shape unlike the reference API's: nested
// objects, a uniform list of line items, a float and a nullable-free bool.
const orders = `[
{"order":"A-1","customer":{"name":"Ada","tier":2},"lines":[{"sku":"x1","qty":2,"price":9.5},{"sku":"y2","qty":1,"price":120}],"paid":true},
{"order":"A-2","customer":{"name":"Grace","tier":1},"lines":[{"sku":"z9","qty":12,"price":0.25}],"paid":false},
{"order":"B-7","customer":{"name":"Edsger","tier":3},"lines":[],"paid":true}
]`

const ordersProto = `syntax = "proto3";
package shop;
message Customer { string name = 1; int32 tier = 2; }
message Line { string sku = 1; int64 qty = 2; double price = 3; }
message Order { string order = 1; Customer customer = 2; repeated Line lines = 3; bool paid = 4; }
`

func writeFile(t *testing.T, name, data string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestDatasetServesEveryFormat(t *testing.T) {
	path := writeFile(t, "orders.json", orders)
	schema, err := CompileProto(t.Context(), writeFile(t, "shop.proto", ordersProto), nil, "shop.Order")
	if err != nil {
		t.Fatal(err)
	}
	d, err := LoadDataset(path, DataOptions{Schema: schema})
	if err != nil {
		t.Fatal(err)
	}
	if d.Key != "order" || d.Len() != 3 {
		t.Fatalf("key %q, %d records; want order, 3", d.Key, d.Len())
	}
	if got := strings.Join(d.Formats(), ","); got != "json,json-fast,toon,cbor,msgpack,protobuf" {
		t.Fatalf("formats %s", got)
	}
	for _, f := range d.Formats() {
		c := codec.MustLookup(f).Codec
		lv, err := d.List(f)
		if err != nil {
			t.Fatal(err)
		}
		b, err := c.Marshal(lv)
		if err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		if err := d.CheckList(f, b, 0); err != nil {
			t.Errorf("%s list: %v", f, err)
		}
		key, rec := d.Record(1)
		g, err := d.Get(key, f)
		if err != nil {
			t.Fatal(err)
		}
		if b, err = c.Marshal(g); err != nil {
			t.Fatal(err)
		}
		if err := d.Check(f, b, rec); err != nil {
			t.Errorf("%s get: %v", f, err)
		}
		// A wrong record fails the check: the check can fail.
		_, other := d.Record(0)
		if err := d.Check(f, b, other); err == nil {
			t.Errorf("%s: record 1 passed as record 0", f)
		}
	}
	// Create, update and delete in one format, read in another.
	_, rec := d.Record(0)
	key, nv := d.WithKey(rec, 7)
	body, err := d.Encode("msgpack", nv)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := d.Create(body, "msgpack", "toon"); err != nil {
		t.Fatal(err)
	}
	if _, err := d.Create(body, "msgpack", "toon"); !errors.Is(err, api.ErrInvalid) {
		t.Fatalf("second create: %v, want ErrInvalid", err)
	}
	lv, _ := d.List("json")
	b, _ := codec.MustLookup("json").Codec.Marshal(lv)
	if err := d.CheckList("json", b, 0); err == nil || !strings.Contains(err.Error(), "beyond the dataset") {
		t.Fatalf("list with a created record and no extra allowed: %v", err)
	}
	if err := d.CheckList("json", b, 1); err != nil {
		t.Fatal(err)
	}
	_, rec2 := d.Record(2)
	key2, nv2 := d.WithKey(rec2, 7)
	if key2 != key {
		t.Fatalf("WithKey(7) gave %q and %q for two records", key, key2)
	}
	body, err = d.Encode("toon", nv2)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := d.Put(key, body, "toon", "cbor"); err != nil {
		t.Fatal(err)
	}
	if _, err := d.Put("A-1", body, "toon", "cbor"); !errors.Is(err, api.ErrInvalid) {
		t.Fatalf("a body keyed otherwise than the path: %v, want ErrInvalid", err)
	}
	if err := d.Delete(key); err != nil {
		t.Fatal(err)
	}
	if err := d.Delete(key); !errors.Is(err, api.ErrNotFound) {
		t.Fatalf("second delete: %v", err)
	}
}

func TestDatasetRefusesWhatAFormatCannotCarry(t *testing.T) {
	for _, tc := range []struct {
		name, data, proto, want string
	}{
		{"int past 64 bits", `[{"id":1,"n":2},{"id":2,"n":123456789012345678901234567890}]`, "", "record 1: json: $.n: "},
		{"field not in the schema", `[{"id":1},{"id":2,"extra":true}]`, "syntax=\"proto3\"; message R { int64 id = 1; }", "record 1: protobuf"},
		{"null in protobuf", `[{"id":1,"s":null}]`, "syntax=\"proto3\"; message R { int64 id = 1; string s = 2; }", "record 0: protobuf: $.s: null vs missing"},
		{"duplicate key", `[{"id":1},{"id":1}]`, "", "no member is a unique"},
		{"not an object", `[{"id":1},[2]]`, "", "record 1 is a array"},
		{"key with a slash", `[{"k":"a/b"}]`, "", "no member is a unique"},
		// A path cleans "." and ".." away: those records could never be
		// reached at /records/{key}.
		{"key a dot", `[{"id":"."}]`, "", "no member is a unique"},
		{"key two dots", `[{"id":"x"},{"id":".."}]`, "", "no member is a unique"},
		{"key two dots named", `[{"id":"x"},{"id":".."}]`, "", "record 1: its key"},
		// -0 is served, and looked up, as 0: the same key twice.
		{"keys -0 and 0", `[{"id":-0,"v":1},{"id":0,"v":1}]`, "", "no member is a unique"},
		{"malformed", `[{"id":1},{"id":]`, "", "bad input"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o := DataOptions{}
			if tc.proto != "" {
				s, err := CompileProto(t.Context(), writeFile(t, "r.proto", tc.proto), nil, "")
				if err != nil {
					t.Fatal(err)
				}
				o.Schema = s
			}
			if strings.HasSuffix(tc.name, " named") {
				o.Key = "id"
			}
			_, err := LoadDataset(writeFile(t, "d.json", tc.data), o)
			if !errors.Is(err, ErrData) || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("got %v, want an ErrData containing %q", err, tc.want)
			}
			if strings.Contains(err.Error(), "\n") {
				t.Errorf("a multi-line error: %q", err)
			}
		})
	}
}

// TestDatasetServesInt64PastFloat: a record with 64-bit integers past
// 2^53 (snowflake IDs) is served in JSON by both libraries, digit for
// digit, and a reply with one digit off, which a float64 reading would
// take for the same number, fails the check. Before, the dataset read
// JSON numbers as float64: such a file was refused for JSON at start,
// and a study of it could not have JSON at all.
func TestDatasetServesInt64PastFloat(t *testing.T) {
	path := filepath.Join(t.TempDir(), "ids.json")
	data := `[{"id":1,"snowflake":9007199254740993,"neg":-9007199254740995,"u":18446744073709551615,"s":"東京","n":null},{"id":2,"snowflake":1,"neg":0,"u":0,"s":"","n":null}]`
	if err := os.WriteFile(path, []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
	d, err := LoadDataset(path, DataOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"json", "json-fast"} {
		v, err := d.Get("1", f)
		if err != nil {
			t.Fatal(err)
		}
		b, err := codec.MustLookup(f).Codec.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		for _, want := range []string{`"snowflake":9007199254740993`, `"neg":-9007199254740995`, `"u":18446744073709551615`} {
			if !bytes.Contains(b, []byte(want)) {
				t.Errorf("%s: reply %s lacks %s", f, b, want)
			}
		}
		_, rec := d.Record(0)
		if err := d.Check(f, b, rec); err != nil {
			t.Errorf("%s: the exact reply fails its check: %v", f, err)
		}
		off := bytes.Replace(b, []byte("9007199254740993"), []byte("9007199254740992"), 1)
		if err := d.Check(f, off, rec); err == nil || !strings.Contains(err.Error(), "$.snowflake") {
			t.Errorf("%s: a reply one digit off passes its check (%v)", f, err)
		}
		// Written back (PUT) in this format, the record keeps its digits.
		got, err := d.Put("1", b, f, f)
		if err != nil {
			t.Fatal(err)
		}
		if b2, _ := codec.MustLookup(f).Codec.Marshal(got); !bytes.Equal(b2, b) {
			t.Errorf("%s: after a PUT of %s the record is %s", f, b, b2)
		}
	}
}
