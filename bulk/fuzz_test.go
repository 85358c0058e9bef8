package bulk

import (
	"bytes"
	"errors"
	"io"
	"testing"
)

// fuzzFormat checks a decoder against arbitrary bytes: no panic; it stops
// with io.EOF or a *RecordError whose index is the count of records it
// returned; every record it returned is valid; and those records, encoded
// again, decode to themselves.
func fuzzFormat(f *testing.F, format string) {
	for _, n := range []int{0, 1, 3} {
		var b bytes.Buffer
		Generate(&b, format, n)
		f.Add(b.Bytes())
	}
	var b bytes.Buffer
	Generate(&b, format, 5)
	f.Add(b.Bytes()[:b.Len()/2])
	f.Fuzz(func(t *testing.T, body []byte) {
		dec, _ := NewDecoder(format, bytes.NewReader(body))
		var recs []Airport
		var err error
		for {
			var a Airport
			if err = dec.Next(&a); err != nil {
				break
			}
			if verr := a.Validate(len(recs)); verr != nil {
				t.Fatalf("returned an invalid record: %v", verr)
			}
			recs = append(recs, a)
			if len(recs) > len(body) {
				t.Fatal("more records than bytes")
			}
		}
		if err != io.EOF {
			var re *RecordError
			if !errors.As(err, &re) || re.Index != len(recs) {
				t.Fatalf("error %v after %d records", err, len(recs))
			}
		}
		if again := dec.Next(new(Airport)); again == nil {
			t.Fatal("Next succeeded after the end")
		}
		var out bytes.Buffer
		enc, _ := NewEncoder(format, &out, len(recs))
		for i := range recs {
			enc.Write(&recs[i])
		}
		if err := enc.Close(); err != nil {
			t.Fatal(err)
		}
		back, err := decodeAll(t, format, out.Bytes())
		if err != nil || len(back) != len(recs) {
			t.Fatalf("re-encoded %d records read back as %d: %v", len(recs), len(back), err)
		}
		for i := range back {
			if back[i] != recs[i] {
				t.Fatalf("record %d: %+v became %+v", i, recs[i], back[i])
			}
		}
	})
}

func FuzzJSON(f *testing.F)     { fuzzFormat(f, FormatJSON) }
func FuzzNDJSON(f *testing.F)   { fuzzFormat(f, FormatNDJSON) }
func FuzzTOON(f *testing.F)     { fuzzFormat(f, FormatTOON) }
func FuzzProtobuf(f *testing.F) { fuzzFormat(f, FormatProtobuf) }
func FuzzCSV(f *testing.F)      { fuzzFormat(f, FormatCSV) }
