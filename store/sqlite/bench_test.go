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

// BenchmarkUpsertRecords is the store alone: records already decoded, so
// the per-row cost is the binding's and SQLite's (compare the builds with
// CGO_ENABLED=0 go test -bench UpsertRecords -benchmem ./store/sqlite).
func BenchmarkUpsertRecords(b *testing.B) {
	const n = 100_000
	all := make(recs, n)
	for i := range all {
		all[i] = bulk.Generated(i)
	}
	var rows int
	for b.Loop() {
		db, err := Open(filepath.Join(b.TempDir(), "a.db"), Options{})
		if err != nil {
			b.Fatal(err)
		}
		r := all
		res, err := db.Upsert(context.Background(), &r)
		if err != nil || res.Inserted != n {
			b.Fatal(res, err)
		}
		db.Close()
		rows += n
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(rows), "ns/row")
}
