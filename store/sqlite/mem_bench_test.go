package sqlite

import (
	"context"
	"testing"

	"github.com/wirebench/wirebench/bulk"
)

// BenchmarkMemUpsert is the per-row cost of the binding and SQLite's CPU
// work alone: an in-memory database, no file I/O, records pre-decoded.
func BenchmarkMemUpsert(b *testing.B) {
	const n = 50_000
	all := make(recs, n)
	for i := range all {
		all[i] = bulk.Generated(i)
	}
	var rows int
	for b.Loop() {
		db, err := Open(":memory:", Options{})
		if err != nil {
			b.Fatal(err)
		}
		r := all
		if res, err := db.Upsert(context.Background(), &r); err != nil || res.Inserted != n {
			b.Fatal(res, err)
		}
		db.Close()
		rows += n
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(rows), "ns/row")
}
