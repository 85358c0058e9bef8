package bulk

import (
	"bytes"
	"errors"
	"io"
	"strings"
	"testing"
	"testing/iotest"
)

func decodeAll(t testing.TB, f string, body []byte) ([]Airport, error) {
	t.Helper()
	dec, err := NewDecoder(f, bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	var out []Airport
	for {
		var a Airport
		err := dec.Next(&a)
		if err == io.EOF {
			return out, nil
		}
		if err != nil {
			return out, err
		}
		out = append(out, a)
	}
}

func generate(t testing.TB, f string, n int) []byte {
	t.Helper()
	var b bytes.Buffer
	if _, err := Generate(&b, f, n); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// Every format reads back exactly what the generator wrote, including
// names with commas, quotes and non-ASCII letters, and an empty body of
// each format is zero records.
func TestRoundTripEveryFormat(t *testing.T) {
	for _, f := range Formats() {
		for _, n := range []int{0, 1, 7, 1000} {
			got, err := decodeAll(t, f, generate(t, f, n))
			if err != nil {
				t.Fatalf("%s n=%d: %v", f, n, err)
			}
			if len(got) != n {
				t.Fatalf("%s n=%d: %d records", f, n, len(got))
			}
			for i, a := range got {
				if a != Generated(i) {
					t.Fatalf("%s record %d: got %+v, want %+v", f, i, a, Generated(i))
				}
			}
		}
	}
}

func TestGeneratorIsDeterministicAndKeysUnique(t *testing.T) {
	if !bytes.Equal(generate(t, FormatJSON, 500), generate(t, FormatJSON, 500)) {
		t.Fatal("two generations differ")
	}
	seen := map[string]bool{}
	for i := range 200_000 {
		k := Generated(i).IATACode
		if seen[k] {
			t.Fatalf("key %s repeats at %d", k, i)
		}
		seen[k] = true
	}
	var c Checksum
	b := generate(t, FormatCSV, 300)
	recs, _ := decodeAll(t, FormatCSV, b)
	for i := len(recs) - 1; i >= 0; i-- { // order does not matter
		c.Add(&recs[i])
	}
	if c != GeneratedChecksum(300) {
		t.Fatalf("checksum %v, want %v", c, GeneratedChecksum(300))
	}
	swapped := Generated(1)
	swapped.Name, swapped.City = swapped.City, swapped.Name
	var d Checksum
	d.Add(&swapped)
	var e Checksum
	a1 := Generated(1)
	e.Add(&a1)
	if d == e {
		t.Fatal("checksum ignores which field holds which text")
	}
}

// corrupt returns a body of n records in format f whose record bad has
// its name replaced by something invalid for that format.
func corrupt(t *testing.T, f string, n, bad int) []byte {
	t.Helper()
	var b bytes.Buffer
	enc, err := NewEncoder(f, &b, n)
	if err != nil {
		t.Fatal(err)
	}
	for i := range n {
		a := Generated(i)
		if i == bad {
			a.Name = "" // empty: every format carries it, Validate refuses it
		}
		if err := enc.Write(&a); err != nil {
			t.Fatal(err)
		}
	}
	enc.Close()
	return b.Bytes()
}

// A bad record at the start, middle and end is reported with its index and
// field, after exactly the records before it.
func TestBadRecordNamesIndexAndField(t *testing.T) {
	const n = 101
	for _, f := range Formats() {
		for _, bad := range []int{0, n / 2, n - 1} {
			got, err := decodeAll(t, f, corrupt(t, f, n, bad))
			var re *RecordError
			if !errors.As(err, &re) || re.Index != bad || re.Field != "name" || !errors.Is(err, ErrMissing) {
				t.Fatalf("%s bad=%d: err %v, want record %d field name missing", f, bad, err, bad)
			}
			if len(got) != bad {
				t.Fatalf("%s bad=%d: %d records before the error", f, bad, len(got))
			}
			if !strings.Contains(err.Error(), "record ") || !strings.Contains(err.Error(), `"name"`) {
				t.Fatalf("%s: message %q does not name the record and field", f, err)
			}
		}
	}
}

func TestMalformedBodies(t *testing.T) {
	long := strings.Repeat("x", MaxText+1)
	cases := []struct {
		f, body string
		index   int
		field   string
		is      error
	}{
		{FormatJSON, ``, 0, "", ErrSyntax},
		{FormatJSON, `{"iata_code":"A"}`, 0, "", ErrSyntax},
		{FormatJSON, `[{"iata_code":"A","name":"n","city":"c","country":"k"}`, 1, "", ErrSyntax},
		{FormatJSON, `[{"iata_code":"A","name":"n","city":"c","country":"k"}] x`, 1, "", ErrSyntax},
		{FormatJSON, `[{"iata_code":"A","name":"n","city":"c"}]`, 0, "country", ErrMissing},
		{FormatJSON, `[{"iata_code":"A","name":null,"city":"c","country":"k"}]`, 0, "name", ErrInvalid},
		{FormatJSON, `[{"iata_code":"A","name":"` + long + `","city":"c","country":"k"}]`, 0, "name", ErrInvalid},
		{FormatJSON, `[{"iata_code":"A","name":"\ud800","city":"c","country":"k"}]`, 0, "name", ErrSyntax},
		{FormatJSON, "[{\"iata_code\":\"A\",\"name\":\"\xff\",\"city\":\"c\",\"country\":\"k\"}]", 0, "name", ErrSyntax},
		{FormatJSON, `[{"iata_code":"A","x":[[[[` + strings.Repeat("[", 70) + `]]]]]]`, 0, "", ErrSyntax},
		{FormatNDJSON, "{\"iata_code\":\"A\",\"name\":\"n\",\"city\":\"c\",\"country\":\"k\"}\n[]", 1, "", ErrSyntax},
		{FormatCSV, "", 0, "", ErrSyntax},
		{FormatCSV, "iata_code,name,city\nA,n,c\n", 0, "", ErrSyntax},
		{FormatCSV, "iata_code,name,city,country\nA,n,c\n", 0, "", ErrSyntax},
		{FormatCSV, "iata_code,name,city,country\nA,\"" + strings.Repeat("y", MaxRecord+readBufSize+10), 0, "", ErrSyntax},
		{FormatTOON, "airports[2]{iata_code,name,city,country}:\n  A,n,c,k\n", 1, "", ErrSyntax},
		{FormatTOON, "airports[1]{iata_code,name,city,country}:\n  A," + strings.Repeat("z", MaxRecord+10) + ",c,k\n", 0, "", ErrSyntax},
		{FormatProtobuf, "\x05\x0a\x01A", 0, "", ErrSyntax},
		{FormatProtobuf, "\xff\xff\x01", 0, "", ErrSyntax},
		{FormatProtobuf, "\x02\x28\x01", 0, "iata_code", ErrMissing},
		{FormatProtobuf, "\x02\x08\x01", 0, "iata_code", ErrInvalid},
	}
	for i, c := range cases {
		_, err := decodeAll(t, c.f, []byte(c.body))
		var re *RecordError
		if !errors.As(err, &re) || re.Index != c.index || re.Field != c.field || !errors.Is(err, c.is) {
			t.Errorf("case %d (%s %.40q): err %v, want record %d field %q %v", i, c.f, c.body, err, c.index, c.field, c.is)
		}
	}
}

// Unknown JSON fields of any shape are skipped; the last of a repeated
// field wins, as in encoding/json.
func TestJSONUnknownAndRepeatedFields(t *testing.T) {
	body := `[ {"x":{"a":[1,-2.5e3,true,false,null,"s\"\\\u00e9"]},"iata_code":"A","name":"old","name":"new","city":"c","country":"k\n"} ]`
	got, err := decodeAll(t, FormatJSON, []byte(body))
	if err != nil || len(got) != 1 || got[0] != (Airport{"A", "new", "c", "k\n"}) {
		t.Fatalf("got %+v, %v", got, err)
	}
	got, err = decodeAll(t, FormatJSON, []byte(`[{"iata_code":"\ud83d\ude00","name":"n","city":"c","country":"k"}]`))
	if err != nil || got[0].IATACode != "😀" {
		t.Fatalf("surrogate pair: %+v, %v", got, err)
	}
}

// UTF-8 is checked on every raw byte of every string, kept or skipped,
// also when a rune is cut between two reads; an unknown field's non-ASCII
// value is accepted (the first decoder checked only the bytes it kept:
// it refused "é" in an unknown field and let "0\xa3" through).
func TestJSONUTF8EverywhereAndAcrossReads(t *testing.T) {
	rec := func(extra string) []byte {
		return []byte(`[{"iata_code":"A","note":"` + extra + `","name":"Zürich ` + strings.Repeat("é", 40) + `","city":"c","country":"k"}]`)
	}
	for _, oneByte := range []bool{false, true} {
		read := func(b []byte) ([]Airport, error) {
			var r io.Reader = bytes.NewReader(b)
			if oneByte {
				r = iotest.OneByteReader(r)
			}
			dec, _ := NewDecoder(FormatJSON, r)
			var got []Airport
			for {
				var a Airport
				if err := dec.Next(&a); err == io.EOF {
					return got, nil
				} else if err != nil {
					return got, err
				}
				got = append(got, a)
			}
		}
		got, err := read(rec("é😀"))
		if err != nil || len(got) != 1 || got[0].Name != "Zürich "+strings.Repeat("é", 40) {
			t.Fatalf("one byte %v: %+v %v", oneByte, got, err)
		}
		for _, bad := range []string{"0\xa3", "\xc3", "\xed\xa0\x80", "\xf0\x9f\x98"} {
			if _, err := read(rec(bad)); !errors.Is(err, ErrSyntax) || !strings.Contains(err.Error(), "UTF-8") {
				t.Errorf("one byte %v, %q in an unknown field: %v", oneByte, bad, err)
			}
		}
	}
}

func TestFormatOf(t *testing.T) {
	for _, f := range Formats() {
		if got, err := FormatOf(MediaType(f) + "; charset=utf-8"); err != nil || got != f {
			t.Errorf("%s: %q, %v", f, got, err)
		}
	}
	if _, err := FormatOf("application/xml"); !errors.Is(err, ErrFormat) {
		t.Fatalf("xml: %v", err)
	}
	if _, err := NewDecoder("xml", nil); !errors.Is(err, ErrFormat) {
		t.Fatal(err)
	}
	if _, err := Generate(io.Discard, FormatJSON, -1); err == nil {
		t.Fatal("negative n accepted")
	}
}

// Protobuf: unknown fields of every wire type are skipped; a repeated
// field's last value wins (proto3 merge semantics for scalars).
func TestProtobufUnknownAndRepeatedFields(t *testing.T) {
	msg := []byte{
		0x0a, 1, 'A', // iata_code "A"
		0x28, 0x96, 0x01, // field 5 varint 150
		0x31, 1, 2, 3, 4, 5, 6, 7, 8, // field 6 fixed64
		0x3d, 1, 2, 3, 4, // field 7 fixed32
		0x42, 2, 'x', 'y', // field 8 bytes
		0x12, 1, 'n', 0x12, 1, 'N', // name "n" then "N"
		0x1a, 1, 'c', 0x22, 1, 'k',
	}
	body := append([]byte{byte(len(msg))}, msg...)
	got, err := decodeAll(t, FormatProtobuf, body)
	if err != nil || len(got) != 1 || got[0] != (Airport{"A", "N", "c", "k"}) {
		t.Fatalf("%+v %v", got, err)
	}
}
