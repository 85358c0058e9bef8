package toon

import (
	"math"
	"math/rand/v2"
	"reflect"
	"testing"
	"unicode/utf8"

	"github.com/wirebench/wirebench/api"
)

// FuzzDecode feeds arbitrary text to the decoder in both modes and into
// typed targets: it must never panic, and whatever decodes must survive
// encode and decode again unchanged.
func FuzzDecode(f *testing.F) {
	for _, c := range loadFixtures(f) {
		if c.category == "decode" {
			f.Add([]byte(c.input.(string)), c.dec.Lenient, uint8(c.dec.Indent))
		}
	}
	f.Add([]byte("users[1]{id,name,email,created_at}:\n  1,Ada,a@b.c,\"2025-01-02T03:04:05.123456789Z\""), false, uint8(2))
	f.Fuzz(func(t *testing.T, data []byte, lenient bool, indent uint8) {
		opts := UnmarshalOptions{Lenient: lenient, Indent: int(indent%5) + 1, MaxDepth: 64}
		var typed api.UserList
		_ = opts.Unmarshal(data, &typed)
		var user api.User
		_ = opts.Unmarshal(data, &user)
		var rows []airport
		_ = opts.Unmarshal(data, &rows)
		var v any
		if err := opts.Unmarshal(data, &v); err != nil {
			return
		}
		if !utf8.Valid(data) {
			return // lenient mode keeps ill-formed bytes that encoding replaces
		}
		out, err := MarshalOptions{Indent: opts.Indent}.Marshal(v)
		if err != nil {
			t.Fatalf("Marshal of decoded value: %v", err)
		}
		var back any
		if err := (UnmarshalOptions{Indent: opts.Indent}).Unmarshal(out, &back); err != nil {
			t.Fatalf("re-decode: %v\ninput:\n%q\nencoded:\n%q", err, data, out)
		}
		if !equalValues(back, v) {
			t.Fatalf("round trip changed the value\ninput: %q\nencoded: %q", data, out)
		}
	})
}

// FuzzRoundTrip encodes fuzzer-chosen values, generic documents grown
// from a seed and a struct of fuzzer strings and numbers, and requires
// decoding to give them back.
func FuzzRoundTrip(f *testing.F) {
	f.Add(uint64(1), uint64(2), "Ada", "São Paulo", int64(7), 1.5, uint8(0))
	f.Add(uint64(3), uint64(4), "", " - x: [y]", int64(-1), 1e-300, uint8(1))
	f.Add(uint64(5), uint64(6), "true", "a|b\t\"c\\", int64(math.MinInt64), math.Inf(1), uint8(2))
	f.Fuzz(func(t *testing.T, s1, s2 uint64, name, city string, id int64, x float64, opt uint8) {
		mo := MarshalOptions{Delimiter: []Delimiter{Comma, Tab, Pipe}[opt%3], Indent: int(opt/3%4) + 1}
		uo := UnmarshalOptions{Indent: mo.Indent}

		doc := (&docGen{rand.New(rand.NewPCG(s1, s2))}).doc()
		out, err := mo.Marshal(doc)
		if err != nil {
			t.Fatal(err)
		}
		var back any
		if err := uo.Unmarshal(out, &back); err != nil {
			t.Fatalf("%v\n%s", err, out)
		}
		if !equalValues(back, doc) {
			t.Fatalf("generic round trip differs:\n%s", out)
		}

		type rec struct {
			ID   int64    `toon:"id"`
			Name string   `toon:"name"`
			City *string  `toon:"city"`
			X    float64  `toon:"x"`
			Tags []string `toon:"tags"`
		}
		if !utf8.ValidString(name) || !utf8.ValidString(city) {
			return // encoding replaces ill-formed UTF-8, by design
		}
		if math.IsNaN(x) || math.IsInf(x, 0) {
			x = 0 // encoded as null, which leaves the field zero
		}
		in := struct {
			One  rec   `toon:"one"`
			Many []rec `toon:"many"`
		}{rec{id, name, &city, x, []string{name, city}}, []rec{{id, city, &name, -x, nil}, {0, name, nil, x, []string{}}}}
		out, err = mo.Marshal(in)
		if err != nil {
			t.Fatal(err)
		}
		got := in
		got.One, got.Many = rec{}, nil
		if err := uo.Unmarshal(out, &got); err != nil {
			t.Fatalf("%v\n%s", err, out)
		}
		if !reflect.DeepEqual(got, in) {
			t.Fatalf("typed round trip differs\n got %+v\nwant %+v\n%s", got, in, out)
		}
	})
}
