package toon

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"runtime"
	"strings"
	"testing"
)

type airport struct {
	Name     string `json:"name"`
	City     string `json:"city"`
	Country  string `json:"country"`
	IATACode string `json:"iata_code"`
}

type airportList struct {
	Airports []airport `json:"airports"`
}

func makeAirport(i int) airport {
	return airport{
		Name:     fmt.Sprintf("Airport %d", i),
		City:     []string{"Zürich", "São Paulo", "New York, NY", "Tōkyō"}[i%4],
		Country:  []string{"CH", "BR", "US", "JP"}[i%4],
		IATACode: fmt.Sprintf("%c%c%c", 'A'+i%26, 'A'+i/26%26, 'A'+i/676%26),
	}
}

var airportFields = []string{"name", "city", "country", "iata_code"}

func TestEncoderTableMatchesMarshal(t *testing.T) {
	for _, d := range []Delimiter{Comma, Tab, Pipe} {
		t.Run(d.String(), func(t *testing.T) {
			var l airportList
			for i := range 5 {
				l.Airports = append(l.Airports, makeAirport(i))
			}
			want, err := MarshalOptions{Delimiter: d}.Marshal(l)
			if err != nil {
				t.Fatal(err)
			}
			var buf bytes.Buffer
			enc := NewEncoder(&buf, MarshalOptions{Delimiter: d})
			if err := enc.BeginTable("airports", len(l.Airports), airportFields); err != nil {
				t.Fatal(err)
			}
			for i, a := range l.Airports {
				row := any(a)
				if i == 1 {
					row = []any{a.Name, a.City, a.Country, a.IATACode}
				}
				if err := enc.Row(row); err != nil {
					t.Fatal(err)
				}
			}
			if err := enc.End(); err != nil {
				t.Fatal(err)
			}
			if buf.String() != string(want) {
				t.Fatalf("got:\n%s\nwant:\n%s", buf.String(), want)
			}
			dec := NewDecoder(&buf, UnmarshalOptions{})
			n := 0
			for ; ; n++ {
				var a airport
				err := dec.Next(&a)
				if err == io.EOF {
					break
				}
				if err != nil {
					t.Fatal(err)
				}
				if a != l.Airports[n] {
					t.Fatalf("row %d: got %+v, want %+v", n, a, l.Airports[n])
				}
			}
			if n != len(l.Airports) {
				t.Fatalf("decoded %d rows, want %d", n, len(l.Airports))
			}
		})
	}
}

func TestEncoderMisuse(t *testing.T) {
	var buf bytes.Buffer
	enc := NewEncoder(&buf, MarshalOptions{})
	if err := enc.Row(makeAirport(0)); !errors.Is(err, ErrStream) {
		t.Fatalf("Row outside table: %v", err)
	}
	enc = NewEncoder(&buf, MarshalOptions{})
	_ = enc.BeginTable("a", 1, airportFields)
	_ = enc.Row(makeAirport(0))
	if err := enc.Row(makeAirport(1)); !errors.Is(err, ErrCount) {
		t.Fatalf("extra row: %v", err)
	}
	enc = NewEncoder(&buf, MarshalOptions{})
	_ = enc.BeginTable("a", 2, airportFields)
	_ = enc.Row(makeAirport(0))
	if err := enc.End(); !errors.Is(err, ErrCount) {
		t.Fatalf("missing row: %v", err)
	}
}

func TestDecoderShapes(t *testing.T) {
	tests := []struct {
		name, doc string
		want      []string
		err       error
	}{
		{"root table", "[2]{name}:\n  a\n  b", []string{"a", "b"}, nil},
		{"skips fields", "count: 2\nmeta:\n  x: 1\nairports[2]{name}:\n  a\n  b\nafter: 1", []string{"a", "b"}, nil},
		{"list", "items[3]:\n  - name: a\n  - name: b\n    city: c\n  - name: d", []string{"a", "b", "d"}, nil},
		{"inline", "[2]: 1,2", nil, ErrType},
		{"short", "[3]{name}:\n  a\n  b", []string{"a", "b"}, ErrCount},
		{"long", "[1]{name}:\n  a\n  b", []string{"a"}, ErrCount},
		{"no array", "a: 1", nil, ErrStream},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dec := NewDecoder(strings.NewReader(tt.doc), UnmarshalOptions{})
			var got []string
			var err error
			for {
				var a airport
				if err = dec.Next(&a); err != nil {
					break
				}
				got = append(got, a.Name)
			}
			if tt.err == nil && err != io.EOF {
				t.Fatalf("err = %v", err)
			}
			if tt.err != nil && !errors.Is(err, tt.err) {
				t.Fatalf("err = %v, want %v", err, tt.err)
			}
			if strings.Join(got, ",") != strings.Join(tt.want, ",") {
				t.Fatalf("got %q, want %q", got, tt.want)
			}
		})
	}
}

// TestStreamMillionAirports pipes 1,000,000 airports from an Encoder to a
// Decoder and checks that the heap stays flat: both sides hold one line
// at a time, whatever the document's size.
func TestStreamMillionAirports(t *testing.T) {
	if testing.Short() {
		t.Skip("streams 1,000,000 rows")
	}
	const n = 1_000_000
	// The document is about 60 MB; holding it would pass 16 MiB at once.
	// Flat is a few MiB, but HeapInuse counts garbage the GC has not yet
	// reached, which lags on a loaded 2-CPU machine (9.6 MiB seen).
	const limit = 16 << 20
	pr, pw := io.Pipe()
	go func() {
		enc := NewEncoder(pw, MarshalOptions{})
		err := enc.BeginTable("airports", n, airportFields)
		for i := 0; i < n && err == nil; i++ {
			err = enc.Row(makeAirport(i))
		}
		if err == nil {
			err = enc.End()
		}
		pw.CloseWithError(err)
	}()
	runtime.GC()
	var ms runtime.MemStats
	var peak uint64
	sample := func() {
		runtime.ReadMemStats(&ms)
		peak = max(peak, ms.HeapInuse)
	}
	sample()
	dec := NewDecoder(pr, UnmarshalOptions{})
	count := 0
	for {
		var a airport
		err := dec.Next(&a)
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		if count%50_000 == 0 {
			if want := makeAirport(count); a != want {
				t.Fatalf("row %d: got %+v, want %+v", count, a, want)
			}
			sample()
		}
		count++
	}
	sample()
	if count != n {
		t.Fatalf("decoded %d rows, want %d", count, n)
	}
	t.Logf("streamed %d airports; peak HeapInuse %.2f MiB (limit %d MiB)", count, float64(peak)/(1<<20), limit>>20)
	if peak >= limit {
		t.Fatalf("peak HeapInuse %d bytes, want < %d", peak, limit)
	}
}
