package sqlite

import (
	"bytes"
	"context"
	"path/filepath"
	"testing"

	"github.com/wirebench/wirebench/bulk"
)

// BenchmarkUpsertJSON is the streaming path without HTTP: decode a JSON
// array and upsert it into a fresh database, per op b.N... records.
func BenchmarkUpsertJSON(b *testing.B) {
	const n = 100_000
	var body bytes.Buffer
	if _, err := bulk.Generate(&body, bulk.FormatJSON, n); err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(body.Len()))
	for i := 0; b.Loop(); i++ {
		db, err := Open(filepath.Join(b.TempDir(), "a.db"), Options{})
		if err != nil {
			b.Fatal(err)
		}
		dec, _ := bulk.NewDecoder(bulk.FormatJSON, bytes.NewReader(body.Bytes()))
		if _, err := db.Upsert(context.Background(), dec); err != nil {
			b.Fatal(err)
		}
		db.Close()
	}
}

// BenchmarkDecodeJSON is the decoder alone.
func BenchmarkDecodeJSON(b *testing.B) {
	const n = 100_000
	var body bytes.Buffer
	bulk.Generate(&body, bulk.FormatJSON, n)
	b.SetBytes(int64(body.Len()))
	for b.Loop() {
		dec, _ := bulk.NewDecoder(bulk.FormatJSON, bytes.NewReader(body.Bytes()))
		var a bulk.Airport
		for dec.Next(&a) == nil {
		}
	}
}
