package sqlite

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/wirebench/wirebench/bulk"
)

// Records go batchRows to a statement: a key repeated inside one batch, in
// a later batch and in the tail after the last full batch is an insert,
// then updates, the last record winning, exactly as one statement per
// record did.
func TestBatchesKeepInsertThenUpdate(t *testing.T) {
	db := open(t)
	const n = 5*batchRows + 7
	var in []bulk.Airport
	last := map[string]bulk.Airport{}
	for i := range n {
		a := bulk.Generated(i % (3 * batchRows)) // keys come back in later batches and the tail
		if i%batchRows == 5 {
			a = bulk.Generated(i - 1) // the key of the record just before: the same batch
		}
		a.Name = fmt.Sprintf("version %d", i)
		in = append(in, a)
		last[a.IATACode] = a
	}
	res, err := upsert(t, db, in...)
	if err != nil || res.Inserted != int64(len(last)) || res.Updated != int64(n-len(last)) {
		t.Fatalf("%+v %v: want %d inserted, %d updated", res, err, len(last), n-len(last))
	}
	got := rows(t, db)
	if len(got) != len(last) {
		t.Fatalf("%d rows, want %d", len(got), len(last))
	}
	for k, v := range last {
		if got[k] != v {
			t.Fatalf("row %s: %+v, want %+v", k, got[k], v)
		}
	}
}

// A statement error inside a full batch names the batch's records and
// rolls everything back.
func TestBatchErrorRollsBack(t *testing.T) {
	db := open(t)
	bad := bulk.Generated(batchRows + 3)
	if err := db.conn.exec(`CREATE TRIGGER refuse BEFORE INSERT ON airports WHEN new.iata_code = '` + bad.IATACode + `' BEGIN SELECT RAISE(ABORT, 'refused by test'); END`); err != nil {
		t.Fatal(err)
	}
	var in []bulk.Airport
	for i := range 3 * batchRows {
		in = append(in, bulk.Generated(i))
	}
	_, err := upsert(t, db, in...)
	want := fmt.Sprintf("records %d-%d", batchRows, 2*batchRows-1)
	if !errors.Is(err, ErrDB) || !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), "refused by test") {
		t.Fatalf("err %v, want ErrDB naming %s", err, want)
	}
	if c, err := db.Count(); c != 0 || err != nil {
		t.Fatalf("count %d %v after the failed request", c, err)
	}
}
